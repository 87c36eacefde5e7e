"""GPU profiles: specs and dense peak FLOPs per precision, from `gpus.csv` (dated, sourced).

The catalog only states peaks; the metrics layer divides and prints "n/a" when a peak is
unknown.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..errors import InputError

__all__ = ["GpuSpec", "gpu_catalog", "gpu_names", "get_gpu", "detect_gpu", "CATALOG_DATE"]

CATALOG_DATE = "2026-11-29"
_PRECISION_COLUMN = {"fp32": "fp32_tflops", "tf32": "tf32_tflops", "bf16": "bf16_tflops", "fp16": "fp16_tflops"}


@dataclass(frozen=True)
class GpuSpec:
    name: str  # profile name used by --gpu, e.g. "a100-80g"
    match: str  # regex on torch.cuda.get_device_name()
    memory_gb: float | None
    mem_bw_gbps: float | None  # GB/s
    peak_tflops: dict  # precision -> dense peak TFLOPS, or None when unknown
    nvlink_gbps: float | None  # bidirectional, per GPU
    tdp_w: float | None
    verified: str  # "datasheet", "partial", "derived" (SM count x clock x per-SM rate), "UNVERIFIED", "n/a"
    source: str

    def peak_flops(self, precision: str) -> float | None:
        """Dense peak FLOP/s at `precision`; None when the catalog does not know it."""
        tflops = self.peak_tflops.get(precision)
        return None if tflops is None else tflops * 1e12

    @property
    def memory_bytes(self) -> int | None:
        return None if self.memory_gb is None else int(self.memory_gb * 1e9)

    @property
    def suspect(self) -> bool:
        return self.verified.upper().startswith("UNVERIFIED") or self.verified == "partial"


def _num(cell: str) -> float | None:
    cell = cell.strip()
    return float(cell) if cell else None


@lru_cache(maxsize=None)
def gpu_catalog() -> dict[str, GpuSpec]:
    text = resources.files(__package__).joinpath("gpus.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    out = {}
    for row in rows:
        out[row["name"]] = GpuSpec(
            name=row["name"],
            match=row["match"],
            memory_gb=_num(row["memory_gb"]),
            mem_bw_gbps=_num(row["mem_bw_gbps"]),
            peak_tflops={p: _num(row[c]) for p, c in _PRECISION_COLUMN.items()},
            nvlink_gbps=_num(row["nvlink_gbps"]),
            tdp_w=_num(row["tdp_w"]),
            verified=row["verified"],
            source=row["source"],
        )
    return out


def gpu_names() -> list[str]:
    return list(gpu_catalog())


def get_gpu(name: str, flag: str = "--gpu") -> GpuSpec:
    try:
        return gpu_catalog()[name.strip().lower()]
    except KeyError:
        raise InputError(
            f"unknown GPU {flag}={name}; known: auto, {', '.join(gpu_names())}"
        ) from None


def detect_gpu(device_name: str | None, memory_bytes: int | None = None) -> GpuSpec | None:
    """The catalog profile of a device, from its name (and memory for 40/80 GB parts).

    `device_name=None` means no GPU: the `cpu` profile. Returns None for a GPU the catalog
    does not know (MFU is then n/a, and --gpu=auto labels results with the raw name).
    """
    if device_name is None:
        return gpu_catalog()["cpu"]
    hits = [g for g in gpu_catalog().values() if g.name != "cpu" and re.search(g.match, device_name, re.I)]
    if len(hits) > 1 and memory_bytes:
        gb = memory_bytes / 1e9
        hits.sort(key=lambda g: abs((g.memory_gb or 0) - gb))
    return hits[0] if hits else None
