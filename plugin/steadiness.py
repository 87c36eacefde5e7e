"""Was a timed window steady enough to trust? A flag on every record with step times.

Two symptoms of a busy or warming-up machine, each with a stated bound:
- spread: p90 / p10 of the step times above SPREAD_BOUND (steps disagree with each other);
- drift: median of the last fifth of the window over the median of the first fifth, off by
  more than DRIFT_BOUND either way (the machine changed speed during the window: thermal
  throttling, a neighbour starting, caches still warming).
Either one makes the record "unsteady": rerun it before trusting a comparison.
"""

from __future__ import annotations

from statistics import median
from typing import Any, Sequence

__all__ = ["SPREAD_BOUND", "DRIFT_BOUND", "MIN_STEPS", "steadiness", "record_steadiness", "steady_mark",
           "STEADY_RULE"]

SPREAD_BOUND = 1.5  # p90 / p10 of step times
DRIFT_BOUND = 0.20  # |median(last fifth) / median(first fifth) - 1|
MIN_STEPS = 5  # fewer steps: no fifths to compare, no verdict
STEADY_RULE = (f"unsteady = p90/p10 step time > {SPREAD_BOUND:g} or first-to-last-fifth drift > "
               f"{DRIFT_BOUND:.0%}: rerun before comparing")


def _quantile(sorted_t: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    pos = q * (len(sorted_t) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_t) - 1)
    return sorted_t[lo] + (sorted_t[hi] - sorted_t[lo]) * (pos - lo)


def steadiness(step_times_s: Sequence[float]) -> dict[str, Any]:
    """{"steady": True/False/None, "spread": p90/p10, "drift": signed fraction, "reason": words}.
    `steady` is None when there are fewer than MIN_STEPS steps."""
    t = [float(x) for x in step_times_s]
    if len(t) < MIN_STEPS or min(t) <= 0:
        return {"steady": None, "spread": None, "drift": None, "reason": f"fewer than {MIN_STEPS} timed steps"}
    s = sorted(t)
    spread = _quantile(s, 0.9) / _quantile(s, 0.1)
    fifth = max(1, len(t) // 5)
    drift = median(t[-fifth:]) / median(t[:fifth]) - 1.0
    reasons = []
    if spread > SPREAD_BOUND:
        reasons.append(f"p90/p10 {spread:.2f} > {SPREAD_BOUND:g}")
    if abs(drift) > DRIFT_BOUND:
        reasons.append(f"drift {drift:+.0%} first to last fifth (bound {DRIFT_BOUND:.0%})")
    return {"steady": not reasons, "spread": spread, "drift": drift, "reason": "; ".join(reasons)}


def record_steadiness(record: Any) -> dict[str, Any]:
    """From the record's raw step times; else what the record stored (a folded distributed run)."""
    if record.step_times_s:
        return steadiness(record.step_times_s)
    m = record.metrics
    steady = m.get("steady")
    return {"steady": None if steady is None else bool(steady), "spread": m.get("step_time_spread"),
            "drift": m.get("step_time_drift"), "reason": ""}


def steady_mark(record: Any) -> str:
    """"ok", "UNSTEADY" or "n/a" for a table cell."""
    verdict = record_steadiness(record)["steady"]
    return "n/a" if verdict is None else ("ok" if verdict else "UNSTEADY")
