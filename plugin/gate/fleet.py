"""Is this instance a lemon? Place this machine's throughput among other machines of the same
--gpu profile: per benchmark and throughput-like metric, the percentile of the current value in
the fleet's values (one per machine), flagged below a chosen percentile.

Same statistics as the window gate (one value per run, no within-run steps), another question:
the fleet is a distribution of machines, not of reruns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import InputError
from ..records.record import Record
from ..records.results import Results
from .compare import identity
from .metrics import GatedMetric, gated_metrics
from .verdict import INSUFFICIENT
from .window import metric_value

__all__ = ["MIN_FLEET", "BELOW", "IN_RANGE", "FleetMetric", "place_in_fleet"]

MIN_FLEET = 5  # machines; fewer and a percentile says little (each machine moves it by >= 20 points)
BELOW = "below fleet"
IN_RANGE = "in fleet range"
_GROUPS = ("throughput", "bandwidth", "mfu")  # what a renter pays for


@dataclass
class FleetMetric:
    record: Record
    metric: GatedMetric
    current: float
    fleet: list[float]  # one value per machine of the fleet
    percentile: float | None  # share of fleet machines at or below the current value, 0..100
    verdict: str


def _profile(results: Results) -> str | None:
    return results.environment.get("gpu_profile")


def place_in_fleet(fleet: Sequence[Results], current: Results, below_percentile: float) -> list[FleetMetric]:
    from scipy.stats import percentileofscore

    if not fleet:
        raise InputError("--fleet: no results files of other machines given")
    for other in fleet:
        if _profile(other) != _profile(current):
            raise InputError(
                f"--fleet {other.path}: GPU profile {_profile(other)!r} is not the current run's "
                f"{_profile(current)!r}; a fleet holds machines of one --gpu profile"
            )
    indexes = [{identity(r): r for r in f.records if r.status == "passed"} for f in fleet]
    out = []
    for rec in current.records:
        if rec.status != "passed":
            continue
        key = identity(rec)
        for metric in gated_metrics():
            if metric.group not in _GROUPS or not metric.higher_is_better:
                continue
            cur = metric_value(rec, metric.key)
            values = [v for v in (metric_value(i[key], metric.key) for i in indexes if key in i) if v is not None]
            if cur is None or not values:
                continue
            if len(values) < MIN_FLEET:
                out.append(FleetMetric(rec, metric, cur, values, None, INSUFFICIENT))
                continue
            pct = float(percentileofscore(values, cur, kind="weak"))
            out.append(FleetMetric(rec, metric, cur, values, pct, BELOW if pct < below_percentile else IN_RANGE))
    if not out:
        raise InputError(f"--fleet: no benchmark of {current.path} appears in the fleet's files; run the same "
                         f"benchmarks with the same options on every machine")
    return out
