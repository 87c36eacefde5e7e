"""Which torch build to install on a driver: the CUDA wheels PyTorch publishes per release.

`install_command(driver_cuda)` is the one command that gives a torch able to use this driver's
GPUs: the newest published build whose CUDA the driver runs (driver CUDA >= build CUDA), from its
download.pytorch.org index -- or plain PyPI when that build is PyPI's default.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .driver import parse_version, row_for
from ..datafiles import csv_rows

__all__ = ["TorchWheel", "TORCH_RELEASE", "TORCH_INDEX", "published_wheels", "wheel_for_driver",
           "install_command", "is_published", "upgrade_advice"]

TORCH_RELEASE = "2.13.0"  # the torch the project pins (README, Dockerfile, CI example)
TORCH_INDEX = "https://download.pytorch.org/whl"


@dataclass(frozen=True)
class TorchWheel:
    torch: tuple[int, int]  # release (major, minor)
    tag: str  # wheel index name: cu126, cu130, cpu
    cuda: tuple[int, int] | None  # toolkit the build bundles; None = CPU build
    pypi_default: bool  # the build `pip install torch==X` gets from PyPI

    @property
    def index_url(self) -> str:
        return f"{TORCH_INDEX}/{self.tag}"


@lru_cache(maxsize=None)
def published_wheels() -> tuple[TorchWheel, ...]:
    rows = csv_rows(__package__, "torch_wheels.csv")
    out = []
    for r in rows:
        t = parse_version(r["torch"])
        c = parse_version(r["cuda"])
        out.append(TorchWheel((t[0], t[1]), r["wheel_tag"], (c[0], c[1]) if c else None, r["pypi_default"] == "yes"))
    return tuple(out)


def _release(version: str) -> tuple[int, int]:
    v = parse_version(version.split("+")[0])
    return v[0], v[1]


def is_published(torch_version: str, tag: str) -> bool:
    """Does PyTorch publish `tag` (cu126, cu130, cpu) for this torch release?"""
    rel = _release(torch_version)
    return any(w.torch == rel and w.tag == tag for w in published_wheels())


def _minor_compat(w: TorchWheel, driver_cuda: tuple[int, int], driver_version: str | None) -> bool:
    """The build runs on an older driver of its CUDA major version under minor-version
    compatibility (driver at least the table's floor)."""
    have = parse_version(driver_version)
    row = row_for(w.cuda)
    return (have is not None and row is not None and row.minor_compat_driver is not None
            and driver_cuda[0] == w.cuda[0] and have >= row.minor_compat_driver)


def wheel_for_driver(driver_cuda: tuple[int, int], torch_version: str = TORCH_RELEASE,
                     driver_version: str | None = None) -> TorchWheel | None:
    """The newest CUDA build of `torch_version` this driver runs with full compatibility, else the
    newest it runs under minor-version compatibility; None when it runs none."""
    rel = _release(torch_version)
    cuda = [w for w in published_wheels() if w.torch == rel and w.cuda is not None]
    full = [w for w in cuda if w.cuda <= driver_cuda]
    if full:
        return max(full, key=lambda w: w.cuda)
    compat = [w for w in cuda if _minor_compat(w, driver_cuda, driver_version)]
    return max(compat, key=lambda w: w.cuda) if compat else None


def install_command(driver_cuda: tuple[int, int] | None, torch_version: str = TORCH_RELEASE,
                    driver_version: str | None = None) -> str | None:
    """`pip install ...` for the build that runs on this driver; None when no build does.

    The command reinstalls even when the same version is installed from another index (a plain
    `pip install torch==2.13.0` over an installed 2.13.0 of another build is a no-op); the index
    is named even for PyPI's default build, so the command means the same wherever pip points."""
    if driver_cuda is None:
        return None
    w = wheel_for_driver(driver_cuda, torch_version, driver_version)
    if w is None:
        return None
    return f"pip install --force-reinstall torch=={torch_version.split('+')[0]} --index-url {w.index_url}"


def upgrade_advice(torch_version: str = TORCH_RELEASE) -> str:
    """For a driver no published build runs on: the driver the oldest build needs, then its install."""
    rel = _release(torch_version)
    oldest = min((w for w in published_wheels() if w.torch == rel and w.cuda), key=lambda w: w.cuda)
    row = row_for(oldest.cuda)
    need = f" >= {row.min_driver_text}" if row else ""
    return (f"no torch {torch_version} build runs on this driver: upgrade the NVIDIA driver{need} "
            f"(CUDA {oldest.cuda[0]}.{oldest.cuda[1]}), then: pip install --force-reinstall "
            f"torch=={torch_version} --index-url {oldest.index_url}")
