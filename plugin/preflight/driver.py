"""Does the NVIDIA driver run the CUDA build of torch? The minimum-driver table and versions.

Two numbers decide it (shared/data/README.md):
- `torch.version.cuda`, the CUDA toolkit torch was built with ("12.8"; None for a CPU build);
- NVML `nvmlSystemGetCudaDriverVersion()`, the newest CUDA the installed driver supports,
  encoded as 1000 * major + 10 * minor (12080 = CUDA 12.8).
Compatible when driver CUDA >= torch CUDA. Within one major version an older driver still runs
the binaries under minor-version compatibility when it is at least the table's
`minor_compat_min_driver` (features that JIT-compile newer PTX fail there).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from ..datafiles import csv_rows

__all__ = ["DriverRow", "driver_table", "parse_version", "cuda_from_nvml", "row_for", "newest_supported"]


@dataclass(frozen=True)
class DriverRow:
    cuda: tuple[int, int]  # toolkit (major, minor)
    min_driver: tuple[int, ...]  # full compatibility
    minor_compat_driver: tuple[int, ...] | None  # oldest driver under minor-version compatibility
    notes: str
    min_driver_text: str = ""  # as NVIDIA writes it ("580.65.06": the zero matters to readers)
    minor_compat_text: str = ""

    @property
    def cuda_label(self) -> str:
        return f"{self.cuda[0]}.{self.cuda[1]}"

    @property
    def wheel_tag(self) -> str:
        """PyTorch's wheel index name for this CUDA version, e.g. cu128."""
        return f"cu{self.cuda[0]}{self.cuda[1]}"


def parse_version(text: str | None) -> tuple[int, ...] | None:
    """'570.86.15' -> (570, 86, 15); '12.8' -> (12, 8); None or junk -> None."""
    if not text:
        return None
    try:
        return tuple(int(p) for p in str(text).strip().split("."))
    except ValueError:
        return None


def cuda_from_nvml(value: int | None) -> tuple[int, int] | None:
    """NVML's 1000 * major + 10 * minor -> (major, minor); 12080 -> (12, 8)."""
    if value is None or value <= 0:
        return None
    return value // 1000, (value % 1000) // 10


def _label(v: tuple[int, ...]) -> str:
    return ".".join(map(str, v))


@lru_cache(maxsize=None)
def driver_table() -> tuple[DriverRow, ...]:
    rows = csv_rows(__package__, "cuda_min_driver.csv")
    out = []
    for r in rows:
        cuda = parse_version(r["cuda_toolkit"])
        out.append(DriverRow(
            cuda=(cuda[0], cuda[1]),
            min_driver=parse_version(r["min_linux_driver_ga"]),
            minor_compat_driver=parse_version(r["minor_compat_min_driver"]),
            notes=r["notes"],
            min_driver_text=r["min_linux_driver_ga"],
            minor_compat_text=r["minor_compat_min_driver"],
        ))
    return tuple(sorted(out, key=lambda row: row.cuda))


def row_for(cuda: tuple[int, int]) -> DriverRow | None:
    """The table row of a toolkit; for a version between rows (12.2), the next lower row of the
    same major version (its driver minimum is a lower bound), else None."""
    same_major = [r for r in driver_table() if r.cuda[0] == cuda[0] and r.cuda <= cuda]
    return same_major[-1] if same_major else None


def newest_supported(driver_cuda: tuple[int, int]) -> DriverRow | None:
    """The newest table toolkit that this driver runs with full compatibility."""
    ok = [r for r in driver_table() if r.cuda <= driver_cuda]
    return ok[-1] if ok else None


def label(v: tuple[int, ...] | None) -> str:
    return "unknown" if v is None else _label(v)
