"""The first-run trap: the driver sees GPUs but this torch cannot use them.

`pip install torch==2.13.0` gives PyPI's CUDA 13.0 build; on a machine whose driver predates
CUDA 13 that torch reports no GPU, and a benchmark run would silently measure the CPU. Here the
driver's view (NVML, else /proc/driver/nvidia/version) meets torch's, and the message names both
CUDA versions and the install command that works on this driver.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import driver, torch_wheels

__all__ = ["DriverView", "unusable_gpu_message", "driver_view", "proc_driver_version"]

_PROC_VERSION = Path("/proc/driver/nvidia/version")


@dataclass(frozen=True)
class DriverView:
    gpu_count: int | None  # GPUs the driver reports; None = unknown (no NVML), 0 = none
    driver_version: str | None  # "570.86.15"
    driver_cuda: tuple[int, int] | None  # newest CUDA the driver runs; None = unknown


def proc_driver_version(text: str) -> str | None:
    """The kernel module's version from /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX
    x86_64 Kernel Module  570.86.15  ...")."""
    m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


def _cuda_of_driver(version: str | None) -> tuple[int, int] | None:
    """Newest table CUDA whose GA minimum this driver meets (a lower bound without NVML)."""
    have = driver.parse_version(version)
    if have is None:
        return None
    ok = [r for r in driver.driver_table() if r.min_driver <= have]
    return ok[-1].cuda if ok else None


def driver_view() -> DriverView:
    """Look at the driver: NVML first, then /proc/driver/nvidia/version (no GPU count there)."""
    from .facts import nvml_summary

    count, version, cuda, _ = nvml_summary()
    if version is not None:
        return DriverView(count, version, driver.cuda_from_nvml(cuda) or _cuda_of_driver(version))
    try:
        proc = proc_driver_version(_PROC_VERSION.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return DriverView(None, None, None)
    return DriverView(None if proc else 0, proc, _cuda_of_driver(proc))


def unusable_gpu_message(torch_version: str, torch_cuda: str | None, cuda_available: bool,
                         view: DriverView) -> str | None:
    """One line when the driver has GPUs (or is loaded) and torch cannot use them; else None."""
    if cuda_available or view.driver_version is None or view.gpu_count == 0:
        return None
    seen = f"reports {view.gpu_count} GPU(s)" if view.gpu_count else "is loaded"
    drv_cuda = "unknown" if view.driver_cuda is None else f"{view.driver_cuda[0]}.{view.driver_cuda[1]}"
    build = f"built for CUDA {torch_cuda}" if torch_cuda else "a CPU-only build"
    cmd = torch_wheels.install_command(view.driver_cuda, driver_version=view.driver_version)
    fix = f"install the build this driver runs: {cmd}" if cmd else torch_wheels.upgrade_advice()
    return (f"driver {view.driver_version} (CUDA {drv_cuda}) {seen} but torch {torch_version} is "
            f"{build} and cannot use them, so every number would be measured on the CPU; {fix}; "
            f"or pass --gpu=cpu to benchmark the CPU on purpose")
