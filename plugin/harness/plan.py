"""How long a session will take, before it starts: an ESTIMATE, labelled so everywhere.

Per benchmark with a workload: (warm-up + measured) optimizer steps x samples per step x the
workload's analytic training FLOPs per sample, at an assumed fraction of the catalog's dense
peak (GPU), or at an assumed CPU rate per core (the catalog has no CPU peaks), plus a fixed
set-up time (model build, loader start). Benchmarks without a workload get the set-up time
only. Nothing here is measured; the measured durations are in the README and the records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

__all__ = ["PlannedBenchmark", "Estimate", "estimate", "ASSUMED_MFU", "ASSUMED_CPU_FLOPS_PER_CORE", "SETUP_S"]

ASSUMED_MFU = 0.35  # a typical well-fed training step on a data-center GPU, not a measurement
ASSUMED_CPU_FLOPS_PER_CORE = 20e9  # fp32 training FLOPs/s one x86 core sustains in torch (assumed)
SETUP_S = 3.0  # model build, loader and worker start-up per benchmark (assumed)


@dataclass(frozen=True)
class PlannedBenchmark:
    workload: str | None  # None: a benchmark without a training window (preflight, collectives)
    precision: str = "fp32"


@dataclass(frozen=True)
class Estimate:
    count: int
    seconds: float
    basis: str  # how it was estimated, in words


def estimate(planned: Iterable[PlannedBenchmark], *, size: str, steps: int, warmup: int, grad_accum: int,
             batch_size: int | None, spec: object | None, on_gpu: bool) -> Estimate:
    from ..workloads import get_workload
    from .precision import get_precision

    planned = list(planned)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    total = 0.0
    for p in planned:
        total += SETUP_S
        if p.workload is None:
            continue
        try:
            wl = get_workload(p.workload)
        except Exception:  # an unknown name fails later with its own message
            continue
        batch = batch_size or wl.default_batch_size(size)
        flops = (warmup + steps) * grad_accum * batch * wl.flops_per_sample(size)
        peak = None
        if on_gpu and spec is not None:
            peak = spec.peak_flops(get_precision(p.precision).catalog_key)
        rate = peak * ASSUMED_MFU if peak else ASSUMED_CPU_FLOPS_PER_CORE * cores
        total += flops / rate
    basis = (f"catalog peak x {ASSUMED_MFU:.0%} assumed MFU" if on_gpu and spec is not None
             else f"{ASSUMED_CPU_FLOPS_PER_CORE / 1e9:g} GFLOP/s per core x {cores} cores assumed")
    return Estimate(len(planned), total, f"workload FLOPs at {basis}, +{SETUP_S:g} s set-up each")
