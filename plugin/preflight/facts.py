"""The machine facts the environment checks judge, gathered once into a plain object.

The checks in `environment.py` are pure functions of a `Facts` (and the run's settings), so the
tests fake any machine -- an old driver, a T4, a 64 MB /dev/shm -- by building a `Facts` by hand.
`gather_facts()` is the only code here that looks at the real machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch

from ..cost.device_memory import DeviceMemory, measure_device_memory
from .probe import ReadProbe, probe_read

__all__ = ["Facts", "GpuFacts", "gather_facts", "nvml_summary", "shm_bytes", "in_container"]


@dataclass(frozen=True)
class GpuFacts:
    name: str  # torch.cuda.get_device_name (or NVML's name when torch cannot see the GPU)
    memory_bytes: int | None  # total device memory
    capability: tuple[int, int] | None  # compute capability; None when torch cannot see it
    bf16: bool | None  # native bf16 (compute capability 8.0+); None = unknown


@dataclass(frozen=True)
class Facts:
    torch_version: str  # torch.__version__
    torch_cuda: str | None  # torch.version.cuda: the CUDA toolkit torch was built with; None = CPU build
    cuda_available: bool  # torch.cuda.is_available(): torch can use a GPU
    gpus: tuple[GpuFacts, ...] = ()  # the GPUs torch sees (or NVML's list when torch sees none)
    nvml_gpu_count: int | None = None  # GPUs the driver reports; None = no NVML/driver
    driver_version: str | None = None  # e.g. "570.86.15"
    driver_cuda: int | None = None  # NVML nvmlSystemGetCudaDriverVersion: 1000*major + 10*minor
    nccl_version: str | None = None  # torch.cuda.nccl.version(); None = no NCCL in this build
    data_dir: str = "."  # where training data (shards, checkpoints) will live
    disk_free_bytes: int | None = None  # free space in data_dir
    read: ReadProbe | None = None  # measured read throughput of data_dir
    shm_bytes: int | None = None  # size of /dev/shm; None = absent
    in_container: bool = False  # Docker/containerd/Kubernetes: /dev/shm defaults to 64 MB there
    cpu_count: int = 1
    visible_devices: str | None = None  # $CUDA_VISIBLE_DEVICES as set ("" hides every GPU)
    gpu_memory: DeviceMemory | None = None  # free/total of cuda:0 from torch.cuda.mem_get_info; None = no GPU


def shm_bytes(path: str = "/dev/shm") -> int | None:
    try:
        st = os.statvfs(path)
    except OSError:
        return None
    return st.f_blocks * st.f_frsize


def in_container() -> bool:
    if Path("/.dockerenv").exists() or Path("/run/.containerenv").exists() or os.environ.get("container"):
        return True
    try:
        text = Path("/proc/1/cgroup").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(word in text for word in ("docker", "kubepods", "containerd", "libpod"))


def nvml_summary() -> tuple[int | None, str | None, int | None, list[GpuFacts]]:
    """(gpu count, driver version, driver CUDA, GPUs) from NVML; Nones when there is no driver."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # no nvidia-ml-py, or no driver (NVMLError_LibraryNotFound)
        return None, None, None, []
    try:
        count = pynvml.nvmlDeviceGetCount()
        drv = pynvml.nvmlSystemGetDriverVersion()
        drv = drv.decode() if isinstance(drv, bytes) else drv
        try:
            cuda = pynvml.nvmlSystemGetCudaDriverVersion()
        except Exception:
            cuda = None
        gpus = []
        for i in range(count):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(h)
            mem = pynvml.nvmlDeviceGetMemoryInfo(h).total
            gpus.append(GpuFacts(name.decode() if isinstance(name, bytes) else name, int(mem), None, None))
        return count, drv, cuda, gpus
    except Exception:
        return None, None, None, []
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def _torch_gpus() -> list[GpuFacts]:
    out = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        with torch.cuda.device(i):
            # native bf16 only: with emulation (the default) a T4 reports True and runs bf16 slowly
            bf16 = torch.cuda.is_bf16_supported(including_emulation=False)
        out.append(GpuFacts(props.name, int(props.total_memory), (props.major, props.minor), bool(bf16)))
    return out


def _nccl() -> str | None:
    try:
        v = torch.cuda.nccl.version()
    except Exception:  # a build without NCCL
        return None
    return ".".join(map(str, v)) if isinstance(v, tuple) else str(v)


def gather_facts(data_dir: str | os.PathLike = ".", read_probe: bool = True) -> Facts:
    """Look at this machine. `read_probe=False` skips the disk read measurement."""
    count, drv, drv_cuda, nvml_gpus = nvml_summary()
    cuda = torch.cuda.is_available()
    gpus = _torch_gpus() if cuda else nvml_gpus
    data = Path(data_dir)
    free = None
    if data.is_dir():
        try:
            st = os.statvfs(data)
            free = st.f_bavail * st.f_frsize
        except OSError:
            free = None
    return Facts(
        torch_version=torch.__version__,
        torch_cuda=torch.version.cuda,
        cuda_available=cuda,
        gpus=tuple(gpus),
        nvml_gpu_count=count,
        driver_version=drv,
        driver_cuda=drv_cuda,
        nccl_version=_nccl() if cuda else None,
        data_dir=str(data),
        disk_free_bytes=free,
        read=probe_read(data) if read_probe and data.is_dir() else None,
        shm_bytes=shm_bytes(),
        in_container=in_container(),
        visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        gpu_memory=measure_device_memory("cuda:0") if cuda else None,
        cpu_count=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1,
    )
