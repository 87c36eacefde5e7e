"""Match the benchmarks of two results files and judge each gated metric: the comparison.

A metric *regresses* when it moved in its bad direction by more than its threshold AND the
move is significant: the one-sided rank test (stats.py) of the current run's per-step samples
(step times; stall fractions for the stall ratio) against the baseline's, moved to the
threshold, has p < alpha. Single-number metrics (peak memory, energy, scaling efficiency)
have no within-run samples and are judged by the threshold alone (said in the p column).
A benchmark that passed in the baseline and failed/OOMed now is a regression too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..records.environment import ENV_MATCH_KEYS
from ..errors import InputError
from .metrics import GatedMetric, gated_metrics
from .stats import ShiftTest, shift_test
from .thresholds import DEFAULT_THRESHOLDS, Threshold, threshold_for
from ..records.record import Record
from ..report.cells import record_label
from ..report.envdiff import EnvDiff, environment_differences
from ..records.results import Results

__all__ = [
    "MetricChange",
    "BenchComparison",
    "Comparison",
    "compare_metric",
    "compare_results",
    "identity",
    "index_records",
    "no_match_error",
    "nothing_compared_error",
    "REGRESSION",
    "IMPROVEMENT",
    "NOISE",
    "UNCHANGED",
    "NA",
    "INCOMPARABLE",
    "UNGATED",
]

REGRESSION = "regression"  # worse beyond threshold, significant
IMPROVEMENT = "improvement"  # better beyond threshold, significant
NOISE = "within noise"  # beyond threshold, but the rank test cannot tell it from noise
UNCHANGED = "unchanged"  # within threshold
NA = "n/a"  # missing on one side
INCOMPARABLE = "not comparable"  # e.g. device memory vs process RSS
UNGATED = "not gated"  # threshold switched off

DEFAULT_ALPHA = 0.05  # one-sided significance level of the rank test
_BAD_STATUSES = ("failed", "oom", "error")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _step_time_margin(metric: GatedMetric, threshold: Threshold | None, slower: bool) -> float:
    """The factor on baseline step times that corresponds to the threshold of this metric.

    Throughput down by t means step time up by 1/(1-t); step time or cost up by t means step
    time x (1+t); mirrored for improvements. pp thresholds have no step-time image: factor 1.
    """
    if threshold is None or threshold.absolute:
        return 1.0
    t = threshold.value
    if metric.higher_is_better:
        return (1.0 / (1.0 - t) if t < 1 else math.inf) if slower else 1.0 / (1.0 + t)
    return (1.0 + t) if slower else (1.0 - t if t < 1 else 0.0)


def _value_margin(threshold: Threshold | None, larger: bool) -> tuple[float, float]:
    """(factor, offset) on baseline samples of the metric itself that put them at the threshold."""
    if threshold is None:
        return 1.0, 0.0
    t = threshold.value if larger else -threshold.value
    return (1.0, t) if threshold.absolute else (1.0 + t, 0.0)


@dataclass
class MetricChange:
    metric: GatedMetric
    base: float | None
    current: float | None
    relative: float | None  # (current - base) / |base|; None when base is 0 or missing
    absolute: float | None  # current - base, in the metric's unit
    worse_by: float | None  # move in the bad direction, in the threshold's unit (>0 = worse)
    threshold: Threshold | None
    test: ShiftTest | None  # None: no step-time evidence (single-number metric or few steps)
    verdict: str


def compare_metric(
    metric: GatedMetric,
    base_value: Any,
    current_value: Any,
    threshold: Threshold | None,
    base_samples: list[float] | None = None,
    current_samples: list[float] | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> MetricChange:
    """Judge one metric. `*_samples` are the within-run samples named by `metric.per_step`
    (step times, or per-step stall fractions); without them the threshold alone decides."""
    b, c = _number(base_value), _number(current_value)
    if b is None or c is None:
        return MetricChange(metric, b, c, None, None, None, threshold, None, NA)
    absolute = c - b
    relative = absolute / abs(b) if b != 0 else (0.0 if c == b else None)
    sign = -1.0 if metric.higher_is_better else 1.0  # turns "went up" into "got worse"
    if threshold is not None and threshold.absolute:
        worse_by = sign * absolute
    elif relative is not None:
        worse_by = sign * relative
    else:  # relative threshold, base 0, current not: an unbounded move
        worse_by = math.copysign(math.inf, sign * absolute)
    test = None
    worse = worse_by >= 0
    if metric.per_step == "step_time":  # worse = slower, whichever way the metric moves
        margin = _step_time_margin(metric, threshold, worse)
        test = shift_test(base_samples or (), current_samples or (), worse, margin)
    elif metric.per_step is not None:  # samples of the metric itself (stall fraction per step)
        larger = worse != metric.higher_is_better
        margin, offset = _value_margin(threshold, larger)
        test = shift_test(base_samples or (), current_samples or (), larger, margin, offset, positive=False)
    if threshold is None:
        verdict = UNGATED
    elif abs(worse_by) <= threshold.value:
        verdict = UNCHANGED
    elif test is not None and test.p_value >= alpha:
        verdict = NOISE
    else:
        verdict = REGRESSION if worse_by > 0 else IMPROVEMENT
    return MetricChange(metric, b, c, relative, absolute, worse_by, threshold, test, verdict)


@dataclass
class BenchComparison:
    base: Record
    current: Record
    metrics: list[MetricChange] = field(default_factory=list)
    status_change: str | None = None  # "passed -> oom": a regression without numbers

    @property
    def regressed(self) -> bool:
        return self.status_change is not None or any(m.verdict == REGRESSION for m in self.metrics)

    @property
    def regressions(self) -> list[MetricChange]:
        return [m for m in self.metrics if m.verdict == REGRESSION]


@dataclass
class Comparison:
    base: Results
    current: Results
    benches: list[BenchComparison]
    only_base: list[Record]
    only_current: list[Record]
    not_compared: list[tuple[Record, str]]  # (current record, why)
    env_blocking: list[EnvDiff]  # ENV_MATCH_KEYS that differ: gate refuses unless allowed
    env_other: list[EnvDiff]  # other differences (CPU cores, driver, commit): shown only
    alpha: float = DEFAULT_ALPHA
    notes: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> list[BenchComparison]:
        return [b for b in self.benches if b.regressed]


# Config entries that tell apart records of one test: a collective sweep records one per op
# and message size under the same test id.
IDENTITY_CONFIG = ("op", "size_bytes", "dtype")


def identity(record: Record) -> tuple:
    """What makes two records the same benchmark: Record.key() + IDENTITY_CONFIG entries."""
    return record.key() + tuple(record.config.get(k) for k in IDENTITY_CONFIG)


def index_records(results: Results, notes: list[str]) -> dict[tuple, Record]:
    """{identity: record}; a second record of one identity is noted and left out."""
    out: dict[tuple, Record] = {}
    for rec in results.records:
        key = identity(rec)
        if key in out:
            notes.append(f"{results.path}: {record_label(rec)} appears twice; the first record is used")
            continue
        out[key] = rec
    return out


def _per_step(record: Record, kind: str | None) -> list[float] | None:
    """The within-run samples of a record that carry a metric's noise (metrics.py)."""
    if kind == "step_time":
        return record.step_times_s
    if kind == "stall_fraction":
        waits = record.config.get("input_wait_s")
        if not isinstance(waits, list) or len(waits) != len(record.step_times_s):
            return None
        return [w / t for w, t in zip(waits, record.step_times_s)
                if _number(w) is not None and _number(t) is not None and t > 0]
    return None


def _compare_records(
    base: Record, current: Record, thresholds: Mapping[str, Threshold | None], alpha: float
) -> BenchComparison:
    bench = BenchComparison(base, current)
    if current.status in _BAD_STATUSES:
        bench.status_change = f"{base.status} -> {current.status}"
    mem_kinds = (base.config.get("peak_mem_kind"), current.config.get("peak_mem_kind"))
    for metric in gated_metrics():
        if _number(base.metrics.get(metric.key)) is None and _number(current.metrics.get(metric.key)) is None:
            continue  # neither run measured it: nothing to compare
        change = compare_metric(
            metric,
            base.metrics.get(metric.key),
            current.metrics.get(metric.key),
            threshold_for(metric, thresholds),
            _per_step(base, metric.per_step),
            _per_step(current, metric.per_step),
            alpha,
        )
        if metric.group == "peak_mem" and mem_kinds[0] != mem_kinds[1]:
            change.verdict = INCOMPARABLE  # device memory vs process RSS are different things
        bench.metrics.append(change)
    return bench


def no_match_error(baseline: str, current: Results, n_current: int) -> InputError:
    return InputError(
        f"no matching benchmarks between baseline {baseline} and current {current.path} ({n_current} "
        f"records): records match on kind, workload, size, precision, batch size, storage, topology, "
        f"world size, GPU profile, test id (and collective op/size); run the same benchmarks with the "
        f"same options for both"
    )


def nothing_compared_error(baseline: str, current: Results, not_compared: list[tuple[Record, str]]) -> InputError:
    why = "; ".join(f"{record_label(r)}: {w}" for r, w in not_compared[:5])
    return InputError(
        f"nothing to compare between baseline {baseline} and current {current.path}: every matching "
        f"benchmark was skipped or failed in one of them ({why}); a gate that compared nothing does not pass"
    )


def compare_results(
    base: Results,
    current: Results,
    thresholds: Mapping[str, Threshold | None] | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> Comparison:
    """Compare two loaded results files; InputError when no benchmark matches."""
    thresholds = DEFAULT_THRESHOLDS if thresholds is None else thresholds
    notes: list[str] = []
    base_idx, cur_idx = index_records(base, notes), index_records(current, notes)
    envs = {"baseline": base.environment, "current": current.environment}
    blocking = environment_differences(envs, ENV_MATCH_KEYS)
    other = [d for d in environment_differences(envs) if d[0] not in ENV_MATCH_KEYS]
    comparison = Comparison(
        base, current, [], [r for k, r in base_idx.items() if k not in cur_idx],
        [r for k, r in cur_idx.items() if k not in base_idx], [], blocking, other, alpha, notes,
    )
    for key, cur in cur_idx.items():
        if key not in base_idx:
            continue
        bas = base_idx[key]
        if bas.status != "passed":
            comparison.not_compared.append((cur, f"baseline status {bas.status}"))
        elif cur.status not in ("passed", *_BAD_STATUSES):
            comparison.not_compared.append((cur, f"current status {cur.status}"))
        else:
            comparison.benches.append(_compare_records(bas, cur, thresholds, alpha))
    if not base_idx.keys() & cur_idx.keys():
        raise no_match_error(f"{base.path} ({len(base_idx)} records)", current, len(cur_idx))
    if not comparison.benches:
        raise nothing_compared_error(str(base.path), current, comparison.not_compared)
    return comparison
