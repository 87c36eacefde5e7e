"""Environment and memory items against faked machines: each defect fails the right item with
the right fix, and the healthy machine passes it."""

import dataclasses

from hypothesis import given, strategies as st

from trainbench.catalog import get_gpu
from trainbench.preflight import FAIL, NA, PASS, WARN, Facts, GpuFacts, MemoryFit, check_memory, estimate_fit
from trainbench.preflight import driver
from trainbench.preflight.environment import (
    EnvSettings, check_bf16, check_cuda_driver, check_disk, check_gpu, check_nccl, check_read, check_shm,
    check_torch, environment_checks,
)
from trainbench.preflight.probe import ReadProbe
from trainbench.workloads import get_workload

GB = 10**9
A100 = GpuFacts("NVIDIA A100-SXM4-80GB", 80 * GB, (8, 0), True)
T4 = GpuFacts("Tesla T4", 16 * GB, (7, 5), False)

# a healthy 8 x A100 box: torch built for CUDA 12.8 on a 570 driver
HEALTHY = Facts(
    torch_version="2.13.0+cu128", torch_cuda="12.8", cuda_available=True, gpus=(A100,) * 8, nvml_gpu_count=8,
    driver_version="570.86.15", driver_cuda=12080, nccl_version="2.27.3", data_dir="/data",
    disk_free_bytes=2000 * GB, read=ReadProbe(2500.0, 32 << 20, 0.013, True), shm_bytes=64 * GB,
)
CPU_BOX = Facts(torch_version="2.13.0+cpu", torch_cuda=None, cuda_available=False, disk_free_bytes=50 * GB,
                shm_bytes=8 * GB)


def fake(**changes):
    return dataclasses.replace(HEALTHY, **changes)


def test_healthy_gpu_machine_passes_every_environment_item():
    settings = EnvSettings(gpu="a100-80g", precision="bf16", num_workers=4, batch_bytes=20_000_000,
                           checkpoint_bytes=300_000_000)
    checks = environment_checks(HEALTHY, settings)
    assert {c.name: c.status for c in checks} == dict.fromkeys(
        ["torch", "cuda_driver", "gpu", "nccl", "bf16", "disk", "read_throughput", "shm"], PASS)


def test_cpu_machine_marks_gpu_items_not_applicable():
    checks = {c.name: c for c in environment_checks(CPU_BOX, EnvSettings())}
    assert [checks[n].status for n in ("cuda_driver", "gpu", "nccl", "bf16")] == [NA] * 4
    assert checks["torch"].status == PASS


# -- driver vs CUDA build ---------------------------------------------------------------------
def test_driver_too_old_for_the_cuda_build_fails_with_upgrade_and_matching_wheel():
    c = check_cuda_driver(fake(driver_version="520.61.05", driver_cuda=11080))
    assert c.status == FAIL
    assert "too old for torch built for CUDA 12.8" in c.reason
    assert ">= 570.26" in c.fix  # the table's minimum for 12.8
    # torch 2.13 has no build for CUDA 11.8: the fix is the driver the oldest build (cu126) needs
    assert ">= 560.28.03" in c.fix and "whl/cu126" in c.fix


def test_older_driver_of_the_same_major_version_warns_minor_version_compatibility():
    c = check_cuda_driver(fake(driver_version="535.104.05", driver_cuda=12020))
    assert c.status == WARN and "minor-version compatibility" in c.reason
    assert ">= 570.26" in c.fix and "--index-url https://download.pytorch.org/whl/cu126" in c.fix


def test_driver_below_the_minor_version_floor_fails():
    c = check_cuda_driver(fake(torch_cuda="12.4", driver_version="520.61.05", driver_cuda=12000))
    assert c.status == FAIL and ">= 550.54.14" in c.fix


def test_cuda_13_build_on_a_cuda_12_driver_fails():
    c = check_cuda_driver(fake(torch_cuda="13.0", driver_version="570.86.15", driver_cuda=12080))
    assert c.status == FAIL and ">= 580.65.06" in c.fix
    # the command that works: torch 2.13's newest build under CUDA 12.8 is cu126 (no cu128 exists)
    assert "pip install --force-reinstall torch==2.13.0 --index-url https://download.pytorch.org/whl/cu126" in c.fix


def test_cpu_only_torch_on_a_gpu_machine_fails():
    f = fake(torch_version="2.13.0+cpu", torch_cuda=None, cuda_available=False)
    assert check_cuda_driver(f).status == FAIL and "whl/cu126" in check_cuda_driver(f).fix
    g = check_gpu(f, "a100-80g")
    assert g.status == FAIL and "torch cannot use them" in g.reason


def test_nvml_reports_the_driver_cuda_version_as_thousand_major_plus_ten_minor():
    assert driver.cuda_from_nvml(12080) == (12, 8)
    assert driver.cuda_from_nvml(13000) == (13, 0)
    assert driver.cuda_from_nvml(None) is None


@given(st.integers(1, 20), st.integers(0, 9))
def test_cuda_from_nvml_inverts_the_encoding(major, minor):
    assert driver.cuda_from_nvml(1000 * major + 10 * minor) == (major, minor)


def test_driver_table_is_the_shared_reference_data():
    rows = {r.cuda_label: r for r in driver.driver_table()}
    assert set(rows) == {"11.8", "12.1", "12.4", "12.6", "12.8", "13.0"}
    assert rows["12.8"].min_driver == (570, 26) and rows["12.8"].wheel_tag == "cu128"
    assert driver.row_for((12, 2)).cuda_label == "12.1"  # between rows: the lower bound
    assert driver.newest_supported((12, 5)).cuda_label == "12.4"


# -- GPU, NCCL, bf16 -------------------------------------------------------------------------
def test_requested_gpu_that_is_not_there_fails():
    c = check_gpu(CPU_BOX, "t4")
    assert c.status == FAIL and "no GPU is visible" in c.reason and "--gpus all" in c.fix


def test_requested_gpu_that_differs_from_the_detected_one_fails_naming_the_right_profile():
    c = check_gpu(fake(gpus=(T4,), nvml_gpu_count=1), "a100-80g")
    assert c.status == FAIL and "Tesla T4" in c.reason and "--gpu=t4" in c.fix


def test_unknown_gpu_warns_that_mfu_is_na():
    c = check_gpu(fake(gpus=(GpuFacts("NVIDIA Z9000", 96 * GB, (10, 0), True),)), "auto")
    assert c.status == WARN and "MFU" in c.reason


def test_nccl_missing_on_a_multi_gpu_machine_fails():
    assert check_nccl(fake(nccl_version=None)).status == FAIL
    assert check_nccl(fake(gpus=(A100,))).status == NA


def test_no_bf16_on_a_t4_fails_bf16_and_suggests_fp16():
    t4 = fake(gpus=(T4,), nvml_gpu_count=1)
    c = check_bf16(t4, "bf16")
    assert c.status == FAIL and "compute capability 7.5" in c.reason and "--precision=fp16" in c.fix
    assert check_bf16(t4, "fp32").status == WARN and "--precision=fp16" in check_bf16(t4, "fp32").fix
    assert check_bf16(t4, "fp16").status == PASS
    assert check_bf16(HEALTHY, "bf16").status == PASS


# -- disk, read throughput, /dev/shm ----------------------------------------------------------
def test_tiny_dev_shm_with_loader_workers_fails_with_the_docker_fix():
    f = fake(shm_bytes=64 * 2**20, in_container=True)  # Docker's default
    resnet_full_batch = 128 * 3 * 224 * 224 + 128 * 8  # uint8 images + int64 labels
    c = check_shm(f, num_workers=4, batch_bytes=resnet_full_batch)
    assert c.status == FAIL and "/dev/shm is 67 MB" in c.reason
    assert "--shm-size" in c.fix and "--ipc=host" in c.fix
    assert check_shm(f, num_workers=0, batch_bytes=resnet_full_batch).status == PASS  # no workers, no shm
    assert check_shm(fake(shm_bytes=512 * 2**20, in_container=True), 2, 1000).status == WARN
    assert check_shm(fake(shm_bytes=None), 2, 1000).status == FAIL


def test_disk_without_room_for_two_checkpoints_fails():
    c = check_disk(fake(disk_free_bytes=2 * GB), checkpoint_bytes=2 * GB)
    assert c.status == FAIL and "--data-dir" in c.fix
    assert check_disk(fake(disk_free_bytes=None)).status == FAIL


def test_slow_data_directory_warns():
    c = check_read(fake(read=ReadProbe(80.0, 32 << 20, 0.4, True)))
    assert c.status == WARN and "80 MB/s" in c.reason and "local NVMe" in c.fix


def test_old_torch_fails():
    assert check_torch(fake(torch_version="2.1.0+cu121")).status == FAIL


# -- memory --------------------------------------------------------------------------------------
def test_too_little_memory_fails_with_the_estimators_advice():
    fit = MemoryFit("t4", 64, needed_bytes=31 * GB, usable_bytes=13.9e9, largest_batch=24,
                    advice=("gradient accumulation: micro-batch 24 x 3 steps keeps the effective batch 64",
                            "activation checkpointing (torch.utils.checkpoint per block)"),
                    method="test")
    c = check_memory(fit, "gpt-small", "fp32")
    assert c.status == FAIL and "31.0 GB" in c.reason and "13.9 GB" in c.reason and "does not fit" in c.reason
    assert "micro-batch 24 x 3" in c.fix and "activation checkpointing" in c.fix
    assert check_memory(dataclasses.replace(fit, needed_bytes=10 * GB), "gpt-small", "fp32").status == PASS
    assert check_memory(None, "gpt-small", "fp32").status == NA  # CPU: no device memory


def test_memory_estimate_of_a_real_workload_on_a_too_small_gpu_fails():
    # gpt-small full: 124 M parameters -> weights + grads + AdamW state alone are ~2 GB
    small = dataclasses.replace(get_gpu("t4"), name="tiny-gpu", memory_gb=1.5)
    c = check_memory(estimate_fit(get_workload("gpt-small"), "full", "fp32", 8, small), "gpt-small", "fp32")
    assert c.status == FAIL and c.fix
    assert c.metrics["needed_bytes"] > 1.9e9
