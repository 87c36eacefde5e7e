"""Roofline-style projection of training throughput from a measured GPU (or CPU) to another.

Per sample, a device needs at least  t_roof = max(FLOPs / peak FLOP/s, bytes / memory bandwidth)
(Williams, Waterman & Patterson 2009, "Roofline"). A measured run achieved t_meas = 1 /
samples_per_s per GPU, i.e. a fraction e = t_roof / t_meas of its roofline. The projection
assumes the same fraction on the target:  t_target = t_roof(target) / e.

When the measured device has no catalog peak (a CPU, or a GPU whose peak is unknown), its
efficiency says nothing about a GPU, so an assumed fraction (`ASSUMED_EFFICIENCY`, about what
nanoGPT reaches on an A100: ~30% MFU) is used and the label says so.

Bytes per sample are a coarse traffic model from the memory estimate: activations are written
in forward and read back in backward, with their gradients written and read (4 x the saved
bytes), plus one pass over weights, grads and optimizer state per step spread over the batch.

Every projection carries `basis`, "projected from <gpu> ...": it is never a measurement.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.gpus import GpuSpec
from .memory import MemoryEstimate

__all__ = ["ASSUMED_EFFICIENCY", "Projection", "bytes_per_sample", "roofline_time", "project"]

ASSUMED_EFFICIENCY = 0.35  # fraction of roofline when it cannot be calibrated (stated in labels)
ACTIVATION_PASSES = 4  # saved activations: write fwd, read bwd, grad write, grad read
STATE_PASSES = 3  # weights read fwd+bwd (~2 passes) and optimizer update (~1 pass over state)


@dataclass(frozen=True)
class Projection:
    samples_per_s: float | None  # per GPU on the target; None when it cannot be projected
    basis: str  # "projected from a100-80g (52% of roofline, calibrated)" or why it is None
    efficiency: float | None  # fraction of roofline used
    bound: str | None  # "compute" or "memory" on the target


def bytes_per_sample(est: MemoryEstimate | None, batch: int) -> float | None:
    if est is None or est.state_bytes is None or batch < 1:
        return None
    return ACTIVATION_PASSES * est.activation_per_sample_bytes + STATE_PASSES * est.state_bytes / batch


def roofline_time(flops: float, nbytes: float | None, gpu: GpuSpec, precision: str) -> tuple[float, str] | None:
    """Lower bound on seconds per sample on `gpu`, and which roof binds; None without a peak."""
    peak = gpu.peak_flops(precision)
    if peak is None:
        return None
    t_compute = flops / peak
    if nbytes is None or not gpu.mem_bw_gbps:
        return t_compute, "compute"
    t_memory = nbytes / (gpu.mem_bw_gbps * 1e9)
    return (t_compute, "compute") if t_compute >= t_memory else (t_memory, "memory")


def project(
    measured_samples_per_s: float,
    source: GpuSpec | None,
    source_name: str,
    target: GpuSpec,
    source_flops: float,
    target_flops: float,
    source_precision: str,
    target_precision: str | None = None,
    source_bytes: float | None = None,
    target_bytes: float | None = None,
    size_note: str = "",
) -> Projection:
    """Per-GPU throughput on `target` from `measured_samples_per_s` per GPU on `source`.

    `source_flops`/`target_flops` are training FLOPs per sample of what each side runs (the
    target may be a larger preset: `size_note` says so, e.g. "tiny -> full", and the
    efficiency is then assumed: a tiny model's efficiency says little about the full one).
    `source_bytes`/`target_bytes`: bytes per sample moved (None: compute roof only).
    """
    target_precision = target_precision or source_precision
    note = f"{size_note}; " if size_note else ""
    target_roof = roofline_time(target_flops, target_bytes, target, target_precision)
    if target_roof is None:
        return Projection(None, f"n/a: no {target_precision} peak for {target.name} in the catalog", None, None)
    source_roof = None
    if source is not None and measured_samples_per_s > 0:
        source_roof = roofline_time(source_flops, source_bytes, source, source_precision)
    if source_roof is not None and not size_note:
        efficiency = min(1.0, source_roof[0] * measured_samples_per_s)
        basis = f"projected from {source_name} ({efficiency:.0%} of roofline, calibrated there)"
    else:
        efficiency = ASSUMED_EFFICIENCY
        why = "size differs" if size_note else "no catalog peak there"
        basis = f"projected from {source_name} ({note}assumed {efficiency:.0%} of roofline: {why})"
    t, bound = target_roof
    return Projection(efficiency / t, basis, efficiency, bound)
