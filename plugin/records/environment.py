"""The environment recorded with every results file: versions, devices, host, commit, time."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import socket
import subprocess
from typing import Any

import torch

__all__ = ["capture_environment", "ENV_MATCH_KEYS"]

# Keys that must agree for a baseline to be comparable (compare/gate refuse otherwise).
ENV_MATCH_KEYS = ("gpu_profile", "gpu_name", "gpu_count", "torch", "cuda")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _nccl_version() -> str | None:
    if not torch.cuda.is_available():
        return None
    try:
        v = torch.cuda.nccl.version()
    except Exception:  # NCCL not built in
        return None
    return ".".join(map(str, v)) if isinstance(v, tuple) else str(v)


def _driver() -> dict[str, Any]:
    """Driver version and the highest CUDA version it supports, from NVML when present."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return {"driver": None, "driver_cuda": None}
    try:
        drv = pynvml.nvmlSystemGetDriverVersion()
        cuda = pynvml.nvmlSystemGetCudaDriverVersion()  # 1000*major + 10*minor
        return {
            "driver": drv.decode() if isinstance(drv, bytes) else drv,
            "driver_cuda": f"{cuda // 1000}.{(cuda % 1000) // 10}",
        }
    except Exception:
        return {"driver": None, "driver_cuda": None}
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass


def capture_environment(gpu_profile: str | None = None) -> dict[str, Any]:
    cuda = torch.cuda.is_available()
    env: dict[str, Any] = {
        "start_time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "nccl": _nccl_version(),
        "gpu_profile": gpu_profile,
        "gpu_name": torch.cuda.get_device_name(0) if cuda else None,
        "gpu_count": torch.cuda.device_count() if cuda else 0,
        "cpu_model": _cpu_model(),
        "cpu_count": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "git_commit": _git_commit(),
    }
    env.update(_driver() if cuda else {"driver": None, "driver_cuda": None})
    return env
