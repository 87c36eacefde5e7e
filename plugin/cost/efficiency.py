"""Compute efficiency per GPU family and precision, fitted to the published table.

For every single-GPU row of `published.csv`, `fit_efficiency` solves the projection model for
the efficiency that reproduces the published throughput (with our analytic FLOPs and traced
bytes at the published configuration). A family's efficiency is the median over its GPUs
(each GPU the median of its rows and workloads). fp16 and bf16 share a fit (same tensor-core
peak); a precision with no published rows gets none here.

Multi-GPU scaling comes from the same table: throughput on N GPUs / (N x one GPU), only where
the table has both for that GPU and workload, capped at linear.
"""

from __future__ import annotations

import statistics
from functools import lru_cache

from ..catalog.families import gpu_family
from ..catalog.gpus import gpu_catalog
from ..catalog.published import PublishedRow, median_per_gpu, published_for, published_rows
from .projection import ASSUMED_EFFICIENCY, Efficiency, device_precision, fit_efficiency
from .step import cost_for

__all__ = ["published_batch", "row_efficiency", "family_efficiency", "efficiency_for", "published_scaling"]

_HALF = ("fp16", "bf16")


def _precision_class(precision: str) -> tuple[str, ...]:
    return _HALF if precision in _HALF else (precision,)


def published_batch(row: PublishedRow) -> int:
    """The row's per-GPU batch, else the median published batch of its workload and size."""
    if row.batch:
        return row.batch
    known = [r.batch for r in published_rows() if r.workload == row.workload and r.size == row.size and r.batch]
    return int(statistics.median(known)) if known else 1


def row_efficiency(row: PublishedRow) -> float | None:
    """The efficiency at which our model reproduces one published single-GPU row."""
    gpu = gpu_catalog().get(row.gpu)
    cost = cost_for(row.workload, row.size, row.precision, published_batch(row))
    if gpu is None or cost is None:
        return None
    applied, _ = device_precision(gpu, row.precision)
    return fit_efficiency(cost, gpu, applied, row.per_gpu)


@lru_cache(maxsize=256)
def family_efficiency(family: str, precision: str, workload: str | None = None,
                      exclude_gpu: str | None = None, exclude_workload: str | None = None) -> Efficiency | None:
    """Published fit for a family, from `workload`'s rows only when given; `exclude_*` hold a GPU
    or a workload out (the cross-checks in tests)."""
    per_gpu: dict[str, list[float]] = {}
    sources = set()
    for row in published_rows():
        fam = gpu_family(row.gpu)
        if (row.gpu_count != 1 or fam is None or fam.name != family or row.gpu == exclude_gpu
                or row.workload == exclude_workload or (workload and row.workload != workload)
                or row.precision not in _precision_class(precision)):
            continue
        e = row_efficiency(row)
        if e is not None:
            per_gpu.setdefault(row.gpu, []).append(e)
            sources.add(f"{row.source} {row.published}")
    if not per_gpu:
        return None
    value = statistics.median(statistics.median(v) for v in per_gpu.values())
    n = sum(len(v) for v in per_gpu.values())
    what = workload or "all workloads"
    label = (f"published fit, {family} {'/'.join(_precision_class(precision))} {what}: "
             f"{n} row{'s' if n > 1 else ''}, {', '.join(sorted(sources))}")
    return Efficiency(value, "published", label)


def efficiency_for(gpu: str, precision: str, workload: str | None = None,
                   exclude_gpu: str | None = None, exclude_workload: str | None = None) -> Efficiency:
    """Published fit of `gpu`'s family (this workload's rows first, then every workload's), else
    its fallback family's (borrowed), else assumed."""
    fam = gpu_family(gpu)
    for name, kind in ((fam.name, "published"), (fam.fallback, "borrowed")) if fam else ():
        if not name:
            continue
        for w in (workload, None):
            e = family_efficiency(name, precision, w, exclude_gpu, exclude_workload)
            if e is not None:
                if kind == "borrowed":
                    e = Efficiency(e.value, kind, f"borrowed from {name}, no published {fam.name} rows: {e.label}")
                return e
    return Efficiency(ASSUMED_EFFICIENCY, "assumed", f"assumed: no published {precision} rows for {gpu}'s family")


def published_scaling(workload: str, size: str, gpu: str, count: int, precision: str) -> tuple[float, str] | None:
    """(per-GPU efficiency on `count` GPUs, label) where the table has N-GPU and 1-GPU rows of
    this workload at this size."""
    def rows(n):
        return [r for r in published_for(workload, gpu, precision, n) if r.size == size]

    many, one = rows(count), rows(1)
    if count <= 1 or not many or not one:
        return None
    raw = median_per_gpu(many) / median_per_gpu(one)
    factor = min(1.0, raw)
    capped = f", published {raw:.2f} capped at linear" if raw > 1 else ""
    r = many[0]
    return factor, f"x{count} at {factor:.0%} scaling ({r.source} {r.published} {count}x {gpu}{capped})"
