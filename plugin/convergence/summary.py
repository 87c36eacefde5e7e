"""N seeded runs of one configuration -> the convergence record's metrics (MLPerf-style).

Olympic mean: the mean after dropping the best and the worst run (with 3+ runs), as MLPerf
Training scores a benchmark. CV = sample standard deviation / mean over all runs. A
configuration's figures are null unless every seed reached the target; how many did is kept.
Dollars to target = time to target (h) x price per GPU-hour of the --gpu profile x GPUs.
"""

from __future__ import annotations

import statistics
from typing import Any, Sequence

from ..catalog.prices import PriceRow, cheapest_price
from .runner import ConvergenceRun

__all__ = ["olympic_mean", "cv", "dollars_to_target", "summarize"]


def olympic_mean(values: Sequence[float]) -> float:
    vals = sorted(values)
    if len(vals) >= 3:
        vals = vals[1:-1]
    return statistics.fmean(vals)


def cv(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else None


def dollars_to_target(time_s: float | None, gpu: str | None, gpus: int,
                      prices: Sequence[PriceRow]) -> tuple[float | None, str]:
    """(USD or None, basis in words) for `time_s` on the cheapest on-demand row of `gpu`."""
    gpu = (gpu or "").lower()
    if time_s is None:
        return None, "n/a: target not reached"
    if not gpu or gpu == "cpu":
        return None, "n/a: no price for a CPU run"
    row = cheapest_price(prices, gpu)
    if row is None:
        return None, f"n/a: no on-demand price for {gpu} in the price catalog"
    per_gpu = row.price_per_gpu(False)
    return time_s / 3600 * per_gpu * gpus, f"{time_s:.4g} s x {per_gpu:.4g} USD/GPU-h x {gpus} ({row.describe(False)})"


def summarize(runs: Sequence[ConvergenceRun], floor: float, target: float) -> tuple[dict[str, Any], str | None]:
    """(metrics, message): message says "not reached ..." when any seed missed the target."""
    reached = [r for r in runs if r.reached]
    metrics: dict[str, Any] = {"loss_floor": floor, "loss_target": target, "runs": len(runs),
                               "reached_runs": len(reached),
                               "final_eval_loss": statistics.median(r.curve[-1]["eval_loss"] for r in runs if r.curve)
                               if any(r.curve for r in runs) else None}
    if len(reached) < len(runs) or not runs:
        missed = [r.reason for r in runs if not r.reached]
        metrics.update(time_to_target_s=None, time_to_target_cv=None, steps_to_target=None,
                       samples_to_target=None, steps_to_target_cv=None)
        return metrics, f"{missed[0]} ({len(reached)} of {len(runs)} seeds reached loss <= {target:.4f})"
    times = [r.time_s for r in runs]
    steps = [r.steps for r in runs]
    samples = [r.samples for r in runs]
    metrics.update(
        time_to_target_s=olympic_mean(times), time_to_target_cv=cv(times),
        steps_to_target=olympic_mean(steps), steps_to_target_cv=cv(steps),
        samples_to_target=olympic_mean(samples),
        eval_fraction=sum(r.eval_time_s for r in runs) / sum(times) if sum(times) else None,
    )
    return metrics, None
