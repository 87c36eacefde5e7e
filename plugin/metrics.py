"""Metric arithmetic: throughput, step-time quantiles, stall
ratio, MFU, energy. FLOPs come from the workload, peaks from the catalog; MFU is None when the
peak is unknown, never a guessed denominator."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .steadiness import steadiness

__all__ = ["step_time_stats", "stall_ratio", "mfu", "sustained_vs_burst", "training_metrics", "SUSTAINED_DROP"]

SUSTAINED_DROP = 0.05  # last fifth of the window this much slower than the first: throttling, not noise


def step_time_stats(step_times_s: Sequence[float]) -> dict[str, float | int]:
    t = np.asarray(step_times_s, dtype=float)
    return {
        "step_time_median_s": float(np.median(t)),
        "step_time_p10_s": float(np.percentile(t, 10)),
        "step_time_p90_s": float(np.percentile(t, 90)),
        "steps_measured": int(t.size),
    }


def stall_ratio(input_wait_s: Sequence[float], step_times_s: Sequence[float]) -> float:
    """Fraction of the window the device waited for input; both series on the same clock."""
    total = float(sum(step_times_s))
    if total <= 0:
        raise ValueError("measured window has no duration")
    return min(1.0, max(0.0, float(sum(input_wait_s)) / total))


def mfu(model_flops_per_s: float, peak_flops_per_s: float | None) -> float | None:
    if not peak_flops_per_s:
        return None
    return model_flops_per_s / peak_flops_per_s


def sustained_vs_burst(step_times_s: Sequence[float]) -> float | None:
    """Throughput of the last fifth of the window / the first fifth (every step carries the same
    samples, so it is first-fifth time / last-fifth time); None with fewer than 5 steps."""
    t = list(step_times_s)
    k = len(t) // 5
    if k == 0 or sum(t[-k:]) <= 0:
        return None
    return sum(t[:k]) / sum(t[-k:])


def training_metrics(
    m: Any,  # plugin.harness.measure.Measurement
    *,
    flops_per_sample: float,
    peak_flops_per_s: float | None,
    tokens_per_sample: int | None = None,
    achievable_peak_flops_per_s: float | None = None,  # measured matmul peak (harness.peak)
) -> dict[str, Any]:
    samples_per_s = m.samples / m.wall_s
    model_flops = flops_per_sample * samples_per_s
    energy = m.telemetry.get("energy_j")
    power = m.telemetry.get("power_w_mean")
    if energy is not None and m.wall_s > 0:
        power = energy / m.wall_s  # mean power from the energy counter over the window
    out: dict[str, Any] = {
        "samples_per_s": samples_per_s,
        "tokens_per_s": samples_per_s * tokens_per_sample if tokens_per_sample else None,
        **step_time_stats(m.step_times_s),
        "stall_ratio": stall_ratio(m.input_wait_s, m.step_times_s),
        "input_wait_s_total": float(sum(m.input_wait_s)),
        # host-to-device copy share, measured apart from the loader wait: a perfect loader reads
        # 0 stall; a pageable (unpinned) copy shows here instead
        "h2d_copy_ratio": float(sum(m.copy_s)) / float(sum(m.step_times_s)) if m.copy_s else None,
        "wall_s": m.wall_s,
        "samples_measured": m.samples,
        "peak_mem_bytes": m.peak_mem_bytes,
        "peak_mem_reserved_bytes": m.peak_mem_reserved_bytes,
        "model_flops_per_s": model_flops,
        "mfu": mfu(model_flops, peak_flops_per_s),
        "mfu_achievable": mfu(model_flops, achievable_peak_flops_per_s),
        "achievable_peak_flops_per_s": achievable_peak_flops_per_s,
        "gpu_util_mean": m.telemetry.get("gpu_util_mean"),
        "power_w_mean": power,
        "energy_j": energy,
        "energy_j_per_sample": energy / m.samples if energy is not None else None,
        "cpu_percent_mean": m.telemetry.get("cpu_percent_mean"),
        **_steadiness_metrics(m.step_times_s),
        "loss_first": m.losses[0],
        "loss_last": m.losses[-1],
    }
    ratio = sustained_vs_burst(m.step_times_s)
    out["sustained_vs_burst"] = ratio
    # judged on a GPU only (NVML telemetry present): a shared CPU's slow fifth is other people's work
    gpu = m.telemetry.get("clock_events_seen") is not None
    out["sustained_drop"] = (ratio < 1.0 - SUSTAINED_DROP) if gpu and ratio is not None else None
    return out


def _steadiness_metrics(step_times_s: Sequence[float]) -> dict[str, Any]:
    s = steadiness(step_times_s)
    return {"steady": s["steady"], "step_time_spread": s["spread"], "step_time_drift": s["drift"]}
