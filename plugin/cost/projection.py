"""Projected training throughput on a GPU from its analytic step cost and a stated efficiency.

Time per sample on GPU g at precision p (a "serial roofline": the compute-bound kernels
(matmuls, convolutions) and the memory-bound ones (normalization, activations, optimizer)
run one after another, so their times add rather than overlap):

    t = FLOPs / (peak_p(g) x e) + bytes / (bandwidth(g) x MEMORY_EFFICIENCY)

`bound` names the larger term. The compute efficiency e is the one number that is not a
datasheet figure; where it comes from is always stated (`Efficiency.kind`):
  measured   this project's own run on a GPU (fitted with `fit_efficiency`), carried to another
             family by the published ratio between the two families
  published  fitted to dated published measurements of the same GPU family (`efficiency.py`)
  borrowed   a neighbouring family's published fit, when the table has none of this family
  assumed    ASSUMED_EFFICIENCY, when nothing is known (never a CPU run's: a CPU's fraction of
             its own peak says nothing about a GPU)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.gpus import GpuSpec
from .step import StepCost

__all__ = [
    "ASSUMED_EFFICIENCY",
    "MEMORY_EFFICIENCY",
    "Efficiency",
    "Projection",
    "device_precision",
    "model_time",
    "fit_efficiency",
    "project",
]

ASSUMED_EFFICIENCY = 0.30  # fraction of peak when nothing better is known (stated in labels)
MEMORY_EFFICIENCY = 0.85  # assumed: STREAM-like copy kernels reach about 80-90% of datasheet bandwidth


@dataclass(frozen=True)
class Efficiency:
    value: float  # fraction of the dense peak the compute-bound part achieves
    kind: str  # "measured", "published", "borrowed", "assumed"
    label: str  # where it comes from, e.g. "published fit, ampere fp16 (6 rows, lambda 2023)"


@dataclass(frozen=True)
class Projection:
    samples_per_s: float | None  # per GPU; None when it cannot be projected (`method` says why)
    method: str  # the full statement: step cost, peak, efficiency and its source
    efficiency: Efficiency | None
    bound: str | None  # "compute" or "memory": the larger term on this GPU


def device_precision(gpu: GpuSpec, precision: str) -> tuple[str, str]:
    """(precision whose peak applies on `gpu`, note): pre-Ampere GPUs run bf16 AMP as fp16
    (+GradScaler) and ignore the TF32 switch."""
    if gpu.peak_flops(precision) is None:
        if precision == "bf16" and gpu.peak_flops("fp16"):
            return "fp16", f"fp16 on {gpu.name}: no bf16"
        if precision == "tf32" and gpu.peak_flops("fp32"):
            return "fp32", f"fp32 on {gpu.name}: no TF32"
    return precision, ""


def _terms(cost: StepCost, gpu: GpuSpec, precision: str) -> tuple[float, float] | None:
    """(seconds of compute at 100% of peak, seconds of memory traffic at MEMORY_EFFICIENCY)."""
    peak = gpu.peak_flops(precision)
    if peak is None:
        return None
    t_memory = 0.0
    if cost.bytes_per_sample is not None and gpu.mem_bw_gbps:
        t_memory = cost.bytes_per_sample / (gpu.mem_bw_gbps * 1e9 * MEMORY_EFFICIENCY)
    return cost.flops_per_sample / peak, t_memory


def model_time(cost: StepCost, gpu: GpuSpec, precision: str, efficiency: float) -> tuple[float, str] | None:
    """Seconds per sample on `gpu` and the larger term; None without a catalog peak."""
    terms = _terms(cost, gpu, precision)
    if terms is None:
        return None
    t_compute, t_memory = terms[0] / efficiency, terms[1]
    return t_compute + t_memory, ("compute" if t_compute >= t_memory else "memory")


def fit_efficiency(cost: StepCost, gpu: GpuSpec, precision: str, samples_per_s: float) -> float | None:
    """The compute efficiency e at which `model_time` equals a measured 1 / samples_per_s (per GPU).

    None without a peak, or when the measurement beats the memory term alone (the traffic model
    overcounts there, so no efficiency can be read from it). Capped at 1.
    """
    terms = _terms(cost, gpu, precision)
    if terms is None or samples_per_s <= 0:
        return None
    spare = 1.0 / samples_per_s - terms[1]
    return None if spare <= 0 else min(1.0, terms[0] / spare)


def project(cost: StepCost, gpu: GpuSpec, precision: str, efficiency: Efficiency | None) -> Projection:
    """Per-GPU throughput of `cost` on `gpu`, with the method stated."""
    applied, note = device_precision(gpu, precision)
    if gpu.peak_flops(applied) is None:
        return Projection(None, f"n/a: no {precision} peak for {gpu.name} in the catalog", None, None)
    if efficiency is None:
        return Projection(None, f"n/a: no efficiency known for {gpu.name}", None, None)
    t, bound = model_time(cost, gpu, applied, efficiency.value)
    peak = f"{gpu.peak_tflops[applied]:g} TFLOPS {applied}"
    if gpu.verified == "derived":
        peak += " (derived peak)"
    method = (f"analytic step {cost.describe()}; {peak} x {efficiency.value:.0%} ({efficiency.label}) "
              f"+ {gpu.mem_bw_gbps:g} GB/s x {MEMORY_EFFICIENCY:.0%} (assumed); {bound}-bound")
    if note:
        method = f"{note}; {method}"
    return Projection(1.0 / t, method, efficiency, bound)
