"""Environment items of the checklist: pure functions of `Facts` and the run's settings.

Each returns one `Check`; none touches the machine, so tests fake any machine by building a
`Facts` by hand (`tests/preflight/test_preflight_environment.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog import detect_gpu, get_gpu
from ..errors import InputError
from . import driver, torch_wheels
from .check import FAIL, NA, PASS, WARN, Check
from .facts import Facts

__all__ = [
    "EnvSettings",
    "environment_checks",
    "check_torch",
    "check_cuda_driver",
    "check_gpu",
    "check_nccl",
    "check_bf16",
    "check_disk",
    "check_read",
    "check_shm",
    "MIN_TORCH",
    "MIN_READ_MB_S",
]

G = "environment"
MIN_TORCH = (2, 4)  # pyproject's torch>=2.4: StatefulDataLoader, torch.amp.GradScaler("cpu")
# One A100 trains ResNet-50 at about 2,500 images/s (NVIDIA DeepLearningExamples, AMP); ImageNet
# JPEGs average about 110 KB, so the GPU eats about 275 MB/s. Below 200 MB/s an image workload
# on a fast GPU is likely to wait for its input.
MIN_READ_MB_S = 200.0
_SHM_FIX = ("give the container more shared memory: docker run --shm-size=16g (or --ipc=host); "
            "Kubernetes: mount an emptyDir with medium: Memory at /dev/shm; or lower --num-workers")


@dataclass(frozen=True)
class EnvSettings:
    gpu: str = "auto"  # the --gpu profile requested ("auto", "cpu" or a catalog name)
    precision: str = "fp32"  # the precision the run will use
    num_workers: int = 0  # DataLoader worker processes the run will start
    prefetch_factor: int = 2  # batches each worker keeps in flight (torch's default)
    batch_bytes: int | None = None  # bytes of one collated batch as it leaves a worker
    checkpoint_bytes: int | None = None  # bytes of one checkpoint (weights + optimizer state)
    min_read_mb_s: float = MIN_READ_MB_S


def _gb(n: float | None) -> str:
    if n is None:
        return "n/a"
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def _mb(n: float | None) -> str:
    return "n/a" if n is None else f"{n / 1e6:.0f} MB"


def check_torch(f: Facts) -> Check:
    v = driver.parse_version(f.torch_version.split("+")[0])
    build = f"CUDA {f.torch_cuda}" if f.torch_cuda else "CPU-only"
    if v is None or v[:2] < MIN_TORCH:
        return Check("torch", G, FAIL, f"torch {f.torch_version} ({build} build) is older than "
                     f"{driver.label(MIN_TORCH)}", _index_fix(driver.cuda_from_nvml(f.driver_cuda), f.driver_version)
                     if f.driver_cuda else f"pip install torch=={torch_wheels.TORCH_RELEASE}")
    return Check("torch", G, PASS, f"torch {f.torch_version}, {build} build")


def _index_fix(drv_cuda: tuple[int, int] | None, driver_version: str | None = None) -> str:
    """The command that installs a torch build this driver runs (the project's torch release)."""
    cmd = torch_wheels.install_command(drv_cuda, driver_version=driver_version)
    if cmd is not None:
        return f"install the torch build this driver runs: {cmd}"
    return torch_wheels.upgrade_advice()


def check_cuda_driver(f: Facts) -> Check:
    """torch's CUDA build vs the newest CUDA the driver supports, and the minimum-driver table."""
    gpu_present = f.cuda_available or bool(f.nvml_gpu_count)
    drv_cuda = driver.cuda_from_nvml(f.driver_cuda)
    drv = f"driver {f.driver_version or 'unknown'}" + (f" (supports CUDA up to {drv_cuda[0]}.{drv_cuda[1]})" if drv_cuda else "")
    if f.torch_cuda is None:
        if gpu_present:
            return Check("cuda_driver", G, FAIL,
                         f"torch {f.torch_version} is a CPU-only build but the {drv} reports "
                         f"{f.nvml_gpu_count or len(f.gpus)} GPU(s): every run would use the CPU",
                         _index_fix(drv_cuda, f.driver_version))
        return Check("cuda_driver", G, NA, "CPU-only torch build and no NVIDIA driver: nothing to match")
    want = driver.parse_version(f.torch_cuda)
    want = (want[0], want[1] if len(want) > 1 else 0)
    row = driver.row_for(want)
    if drv_cuda is None:
        if f.cuda_available:
            return Check("cuda_driver", G, WARN,
                         f"torch built for CUDA {f.torch_cuda} sees a GPU, but NVML cannot report the driver's "
                         f"CUDA version: the match is unchecked", "pip install nvidia-ml-py (NVML bindings)")
        return Check("cuda_driver", G, NA, f"torch built for CUDA {f.torch_cuda}, no NVIDIA driver found: CPU machine")
    need = f"CUDA {f.torch_cuda} needs driver >= {row.min_driver_text}" if row else f"CUDA {f.torch_cuda}"
    metrics = {"torch_cuda": f.torch_cuda, "driver": f.driver_version, "driver_cuda": f"{drv_cuda[0]}.{drv_cuda[1]}"}
    if drv_cuda >= want:
        return Check("cuda_driver", G, PASS, f"torch built for CUDA {f.torch_cuda}; {drv}", metrics=metrics)
    upgrade = (f"upgrade the NVIDIA driver to >= {row.min_driver_text} (the CUDA {row.cuda_label} minimum, "
               f"CUDA release notes table 3)" if row else "upgrade the NVIDIA driver")
    have = driver.parse_version(f.driver_version)
    if (row is not None and row.minor_compat_driver is not None and have is not None
            and drv_cuda[0] == want[0] and have >= row.minor_compat_driver):
        return Check("cuda_driver", G, WARN,
                     f"torch built for CUDA {f.torch_cuda} runs on this older {drv} only under CUDA minor-version "
                     f"compatibility (>= {row.minor_compat_text}): code that JIT-compiles newer "
                     f"PTX fails", f"{upgrade}; or {_index_fix(drv_cuda, f.driver_version)}", metrics=metrics)
    return Check("cuda_driver", G, FAIL,
                 f"{drv} is too old for torch built for CUDA {f.torch_cuda} ({need}): CUDA calls fail with "
                 f"'driver version is insufficient'",
                 f"{upgrade}; or {_index_fix(drv_cuda, f.driver_version)}; in a container, use a CUDA base image no newer "
                 f"than the host driver's CUDA", metrics=metrics)


def check_gpu(f: Facts, requested: str = "auto") -> Check:
    """A GPU is visible to torch, and it is the one `--gpu` names."""
    requested = requested.strip().lower()
    names = [g.name for g in f.gpus]
    if requested == "cpu":
        extra = f" ({len(names)} GPU(s) present and left idle)" if names else ""
        return Check("gpu", G, NA, f"--gpu=cpu: a CPU run was requested{extra}")
    if not f.cuda_available:
        hidden = f" (CUDA_VISIBLE_DEVICES={f.visible_devices!r})" if f.visible_devices is not None else ""
        if f.nvml_gpu_count:
            return Check("gpu", G, FAIL,
                         f"the driver reports {f.nvml_gpu_count} GPU(s) ({', '.join(names) or 'unnamed'}) but torch "
                         f"cannot use them{hidden}",
                         "see the cuda_driver item: a CPU-only torch build or a driver older than torch's CUDA; "
                         "check CUDA_VISIBLE_DEVICES")
        if requested == "auto":
            return Check("gpu", G, NA, "no GPU visible: the pipeline checks run on the CPU")
        return Check("gpu", G, FAIL, f"--gpu={requested} was requested but no GPU is visible{hidden}",
                     "check `nvidia-smi` on the host; in Docker run with --gpus all (NVIDIA Container Toolkit); "
                     "unset CUDA_VISIBLE_DEVICES; or pass --gpu=auto for a CPU run")
    first = f.gpus[0]
    found = detect_gpu(first.name, first.memory_bytes)
    metrics = {"gpu_names": names, "gpu_count": len(names)}
    mixed = len(set(names)) > 1
    if requested == "auto":
        if found is None:
            return Check("gpu", G, WARN, f"{first.name} is not in the GPU catalog: MFU and cost will be n/a",
                         "add a row to plugin/catalog/gpus.csv, or pass the --gpu profile of the same part",
                         metrics=metrics)
        return Check("gpu", G, WARN if mixed else PASS,
                     f"{len(names)} x {first.name} (profile {found.name})" + ("; GPUs differ: " + ", ".join(names) if mixed else ""),
                     "use identical GPUs: the slowest one sets the pace of data-parallel training" if mixed else "",
                     metrics=metrics)
    try:
        spec = get_gpu(requested)
    except InputError as exc:
        return Check("gpu", G, FAIL, str(exc), "pass one of the listed profiles", metrics=metrics)
    if found is not None and found.name == spec.name:
        return Check("gpu", G, PASS, f"{len(names)} x {first.name} matches --gpu={requested}", metrics=metrics)
    label = found.name if found else "not in the catalog"
    return Check("gpu", G, FAIL, f"--gpu={requested} but the device is {first.name} (profile {label}): every "
                 f"number would be labelled with the wrong GPU",
                 f"pass --gpu={found.name if found else 'auto'}, or run on a {requested} machine", metrics=metrics)


def check_nccl(f: Facts) -> Check:
    n = len(f.gpus) if f.cuda_available else 0
    if n <= 1:
        return Check("nccl", G, NA, f"{n} GPU(s): NCCL matters for multi-GPU runs only")
    if f.nccl_version is None:
        return Check("nccl", G, FAIL, f"{n} GPUs but this torch build has no NCCL: multi-GPU runs fall back to "
                     f"gloo, far slower for GPU tensors", "install an official CUDA build of torch (it bundles NCCL)")
    return Check("nccl", G, PASS, f"NCCL {f.nccl_version} for {n} GPUs", metrics={"nccl": f.nccl_version})


def check_bf16(f: Facts, precision: str = "fp32") -> Check:
    if not f.cuda_available or not f.gpus:
        return Check("bf16", G, NA, "no GPU: bf16 support is a GPU question (CPU autocast runs bf16, slowly)")
    lacking = [g for g in f.gpus if g.bf16 is False]
    if not lacking:
        return Check("bf16", G, PASS, f"{f.gpus[0].name} supports bf16")
    g = lacking[0]
    cc = f" (compute capability {g.capability[0]}.{g.capability[1]}; bf16 needs 8.0+)" if g.capability else ""
    if precision == "bf16":
        return Check("bf16", G, FAIL, f"--precision=bf16 but {g.name} has no bf16{cc}",
                     "use --precision=fp16 (autocast float16 + GradScaler: this GPU's tensor cores), or fp32")
    if precision in ("fp32", "tf32"):
        return Check("bf16", G, WARN, f"{g.name} has no bf16{cc}; {precision} leaves its fp16 tensor cores idle",
                     "for mixed precision on this GPU use --precision=fp16 (autocast float16 + GradScaler)")
    return Check("bf16", G, PASS, f"{g.name} has no bf16{cc}; running {precision}")


def check_disk(f: Facts, checkpoint_bytes: int | None = None) -> Check:
    """Free space in the data directory for data, results and checkpoints."""
    if f.disk_free_bytes is None:
        return Check("disk", G, FAIL, f"data directory {f.data_dir} does not exist or cannot be read",
                     "create it, or pass --data-dir=PATH")
    # an atomic checkpoint write holds the old file and the new one at once; 1 GB for results/logs
    need = 1e9 + (2 * checkpoint_bytes if checkpoint_bytes else 0)
    ck = f"; a checkpoint is about {_gb(checkpoint_bytes)} and an atomic save keeps two" if checkpoint_bytes else ""
    metrics = {"disk_free_bytes": f.disk_free_bytes, "checkpoint_bytes": checkpoint_bytes}
    if f.disk_free_bytes < need:
        return Check("disk", G, FAIL, f"{_gb(f.disk_free_bytes)} free in {f.data_dir}, need at least {_gb(need)}{ck}",
                     "free space, or point --data-dir at a larger volume (local NVMe / instance store)", metrics=metrics)
    return Check("disk", G, PASS, f"{_gb(f.disk_free_bytes)} free in {f.data_dir}{ck}", metrics=metrics)


def check_read(f: Facts, min_mb_s: float = MIN_READ_MB_S) -> Check:
    p = f.read
    if p is None:
        return Check("read_throughput", G, NA, "read throughput not measured")
    if p.mb_per_s is None:
        return Check("read_throughput", G, WARN, p.error or "read probe failed", "make the data directory writable")
    how = (f"{p.bytes_read / 2**20:.0f} MiB written, then read back after posix_fadvise(DONTNEED); where the "
           f"file system ignores that hint the read came from memory and this is an upper bound" if p.cold else
           f"{p.bytes_read / 2**20:.0f} MiB read back without evicting the page cache: an upper bound")
    metrics = {"read_mb_per_s": p.mb_per_s}
    if p.mb_per_s < min_mb_s:
        return Check("read_throughput", G, WARN,
                     f"{f.data_dir} reads at {p.mb_per_s:.0f} MB/s ({how}), below {min_mb_s:.0f} MB/s: "
                     f"a fast GPU on an image workload will wait for input",
                     "stage the data on local NVMe / instance store, read through a local cache "
                     "(fsspec simplecache), or pack samples into larger shards", metrics=metrics)
    return Check("read_throughput", G, PASS, f"{f.data_dir} reads at {p.mb_per_s:.0f} MB/s ({how})", metrics=metrics)


def check_shm(f: Facts, num_workers: int = 0, batch_bytes: int | None = None, prefetch_factor: int = 2) -> Check:
    """DataLoader workers hand batches to the trainer through /dev/shm; containers default to 64 MB."""
    metrics = {"shm_bytes": f.shm_bytes, "num_workers": num_workers, "batch_bytes": batch_bytes}
    if num_workers == 0:
        return Check("shm", G, NA if f.shm_bytes is None else PASS,
                     f"0 loader workers (batches built in the training process): /dev/shm "
                     f"{_mb(f.shm_bytes) if f.shm_bytes is not None else 'absent'} is not used", metrics=metrics)
    if f.shm_bytes is None:
        return Check("shm", G, FAIL, f"no /dev/shm but {num_workers} loader workers need it", _SHM_FIX, metrics=metrics)
    # batches in flight live in shared memory: workers x prefetch_factor, x2 for the batch each
    # worker is building while its finished ones wait
    need = 2 * num_workers * prefetch_factor * batch_bytes if batch_bytes else None
    size = f"/dev/shm is {_mb(f.shm_bytes)}"
    flight = (f"{num_workers} workers x {prefetch_factor} prefetched batches of {_mb(batch_bytes)} need about "
              f"{_mb(need)}" if need else f"{num_workers} loader workers")
    if need is not None and f.shm_bytes < need:
        return Check("shm", G, FAIL, f"{size}; {flight}: workers die with 'bus error' / 'No space left on device'",
                     _SHM_FIX, metrics=metrics)
    if f.in_container and f.shm_bytes < 1 << 30:
        return Check("shm", G, WARN, f"{size} in a container ({flight}): larger batches or more workers will not fit",
                     _SHM_FIX, metrics=metrics)
    return Check("shm", G, PASS, f"{size}; {flight}", metrics=metrics)


def environment_checks(f: Facts, s: EnvSettings) -> list[Check]:
    return [
        check_torch(f),
        check_cuda_driver(f),
        check_gpu(f, s.gpu),
        check_nccl(f),
        check_bf16(f, s.precision),
        check_disk(f, s.checkpoint_bytes),
        check_read(f, s.min_read_mb_s),
        check_shm(f, s.num_workers, s.batch_bytes, s.prefetch_factor),
    ]
