"""Spot instances: the checkpoint interval and the expected cost including interruptions.

With checkpoints that take δ to write, interruptions arriving at random with mean time
between them M (a Poisson process), and R to get a replacement running and reload:

- Young (1974), first order: T_opt ≈ sqrt(2 δ M).
- Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart
  dumps", Future Generation Computer Systems 22(3):  T_opt = sqrt(2δM)·[1 + ⅓·sqrt(δ/2M) + (1/9)·(δ/2M)] − δ
  for δ < 2M, and T_opt = M otherwise. Worked values (δ = 5 min): M = 24 h → 116.7 min,
  M = 6 h → 56.7 min.
- Daly's expected wall time to finish T_s of work with compute segments of length τ
  (exact under the Poisson model, failures during restart included):
      T_w(τ) = M · e^{R/M} · (e^{(τ+δ)/M} − 1) · T_s / τ

All times in seconds here. The spot cost of an epoch is then T_w × spot price per GPU-hour
× GPUs; on-demand is billed for T_s alone (no interruptions, no checkpoints needed for cost).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "SpotAssumptions",
    "young_interval",
    "daly_interval",
    "expected_wall_time",
    "SpotEstimate",
    "spot_estimate",
]


@dataclass(frozen=True)
class SpotAssumptions:
    # Mean time between spot interruptions. Clouds publish only coarse interruption-frequency
    # buckets, so this is a choice, stated in every report: 6 h is a pessimistic middle.
    mtbi_s: float = 6 * 3600.0
    # Provisioning a replacement instance and restarting the job, before reloading the
    # checkpoint (a few minutes on the big clouds); the checkpoint load time is added to it.
    restart_s: float = 300.0
    # Checkpoint write time used when no resume record measured one (stated as assumed).
    ckpt_save_s: float = 60.0
    # From goodput records (cost/measured_spot.py): checkpoint save/load seconds on the store
    # they ran against, and where the numbers come from; None / "assumed" without such records.
    measured_save_s: float | None = None
    measured_load_s: float | None = None
    restart_measured: bool = False  # restart_s is a measured restart-to-first-step (load included)
    source: str = "assumed"


def young_interval(delta_s: float, mtbi_s: float) -> float:
    """Young's first-order optimum compute time between checkpoints, sqrt(2 δ M)."""
    _check(delta_s, mtbi_s)
    return math.sqrt(2.0 * delta_s * mtbi_s)


def daly_interval(delta_s: float, mtbi_s: float) -> float:
    """Daly's (2006) higher-order optimum compute time between checkpoints."""
    _check(delta_s, mtbi_s)
    if delta_s >= 2.0 * mtbi_s:
        return mtbi_s
    x = delta_s / (2.0 * mtbi_s)
    return math.sqrt(2.0 * delta_s * mtbi_s) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - delta_s


def expected_wall_time(work_s: float, interval_s: float, delta_s: float, mtbi_s: float, restart_s: float) -> float:
    """Daly's expected wall time for `work_s` of compute, checkpointing every `interval_s`."""
    _check(delta_s, mtbi_s)
    if interval_s <= 0 or work_s < 0 or restart_s < 0:
        raise ValueError("interval must be > 0, work and restart >= 0")
    m = mtbi_s
    return m * math.exp(restart_s / m) * math.expm1((interval_s + delta_s) / m) * work_s / interval_s


@dataclass(frozen=True)
class SpotEstimate:
    interval_s: float  # recommended compute time between checkpoints (Daly 2006)
    wall_s: float  # expected wall time for the epoch on spot, interruptions included
    overhead: float  # wall_s / work_s - 1: checkpoints + rework + restarts
    cost_usd: float | None  # expected spot cost of the epoch; None without a spot price


def spot_estimate(
    work_s: float,
    spot_price_per_gpu_hour: float | None,
    gpus: int,
    delta_s: float,
    mtbi_s: float,
    restart_s: float,
) -> SpotEstimate:
    interval = daly_interval(delta_s, mtbi_s)
    wall = expected_wall_time(work_s, interval, delta_s, mtbi_s, restart_s)
    cost = None if spot_price_per_gpu_hour is None else wall / 3600.0 * spot_price_per_gpu_hour * gpus
    return SpotEstimate(interval, wall, wall / work_s - 1.0 if work_s else 0.0, cost)


def _check(delta_s: float, mtbi_s: float) -> None:
    if delta_s <= 0 or mtbi_s <= 0:
        raise ValueError(f"checkpoint time and MTBI must be > 0, got {delta_s}, {mtbi_s}")
