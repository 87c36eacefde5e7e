"""Gate one run against a *window* of baseline runs: per benchmark and metric, the baseline
median, the run-to-run spread measured over the window (spread.py) and a verdict (verdict.py).

The false-alarm rate `alpha` is for the whole gate, not per metric: a run of the default suite
compares some hundreds of metrics, and at 1% each identical code would be flagged on a few of
them every run (measured: 5 of 10 reruns on the 2-core box). So each metric's band is drawn
at alpha / m (Bonferroni), m the number of metrics judged against a measured spread. And each metric's
spread is moderated toward the median spread of the same metric over the benchmarks of its kind
in the window (spread.py, `prior`): with nine runs one of some hundred spreads comes out far too
small by chance (measured: broadcast 4 KiB at +-6% over 9 runs where its neighbours in the sweep
showed +-15-40%, then a -46% rerun of identical code).

A benchmark matches across files by `compare.identity` (kind, workload, size, ..., collective
op and size). A benchmark that passed in a baseline run and failed/OOMed now is a regression
without numbers. Baseline files must agree with each other on the GPU profile (and the other
ENV_MATCH_KEYS): a window mixing profiles is refused naming the file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..errors import InputError
from ..records.environment import ENV_MATCH_KEYS
from ..records.record import Record
from ..records.results import Results
from ..report.envdiff import EnvDiff, environment_differences
from .compare import index_records, no_match_error, nothing_compared_error
from .metrics import GatedMetric, gated_metrics
from .spread import MIN_RUNS, Spread, kind_priors, measure_spread, own_spread
from .thresholds import DEFAULT_THRESHOLDS, Threshold, threshold_for
from .verdict import INSUFFICIENT, REGRESSION, SUSPICIOUS, classify

__all__ = ["DEFAULT_FALSE_ALARM", "WindowMetric", "WindowBench", "WindowComparison", "compare_window",
           "check_same_environment", "family_size", "metric_value"]

DEFAULT_FALSE_ALARM = 0.01  # one-sided, for the whole gate (family-wise over its metrics)
NA = "n/a"
INCOMPARABLE = "not comparable"  # device memory vs process RSS
UNGATED = "not gated"  # threshold switched off
_BAD_STATUSES = ("failed", "oom", "error")


def metric_value(record: Record, key: str) -> float | None:
    v = record.metrics.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


@dataclass
class WindowMetric:
    metric: GatedMetric
    spread: Spread | None  # over the baseline runs; None when no baseline run has the metric
    current: float | None
    relative: float | None  # (current - baseline median) / |median|
    worse_by: float | None  # in the threshold's unit, > 0 worse
    threshold: Threshold | None
    verdict: str

    @property
    def base(self) -> float | None:
        return self.spread.center if self.spread else None


@dataclass
class WindowBench:
    current: Record
    baselines: list[Record]  # the passed baseline records of this benchmark, window order
    metrics: list[WindowMetric] = field(default_factory=list)
    status_change: str | None = None  # "passed -> oom"

    def has(self, verdict: str) -> bool:
        return any(m.verdict == verdict for m in self.metrics)

    @property
    def regressed(self) -> bool:
        return self.status_change is not None or self.has(REGRESSION)


@dataclass
class WindowComparison:
    baselines: list[Results]
    current: Results
    benches: list[WindowBench]
    only_current: list[Record]
    not_compared: list[tuple[Record, str]]
    env_blocking: list[EnvDiff]  # current vs the window: gate refuses unless allowed
    env_other: list[EnvDiff]
    alpha: float  # family-wise, over all metrics judged against a measured spread
    notes: list[str] = field(default_factory=list)
    family: int = 1  # metrics judged against a measured spread: each band is at alpha / family

    @property
    def alpha_per_metric(self) -> float:
        return self.alpha / max(1, self.family)

    @property
    def regressed(self) -> list[WindowBench]:
        return [b for b in self.benches if b.regressed]

    @property
    def suspicious(self) -> list[WindowBench]:
        return [b for b in self.benches if b.has(SUSPICIOUS) and not b.regressed]

    @property
    def insufficient(self) -> list[WindowBench]:
        return [b for b in self.benches if b.has(INSUFFICIENT)]


def check_same_environment(runs: Sequence[Results], what: str) -> None:
    """InputError naming the first file whose ENV_MATCH_KEYS differ from the first file's."""
    first = runs[0]
    for other in runs[1:]:
        diffs = environment_differences({"a": first.environment, "b": other.environment}, ENV_MATCH_KEYS)
        if diffs:
            shown = ", ".join(f"{k} {v[0]!r} vs {v[1]!r}" for k, v in diffs)
            raise InputError(
                f"{what} {other.path}: environment differs from {first.path} ({shown}); a {what} "
                f"window must come from one GPU profile and software stack; pass files of one profile"
            )


def _judge(metric: GatedMetric, base_values: list[float], current: float | None,
           threshold: Threshold | None, alpha: float, prior: float | None = None) -> WindowMetric:
    absolute = bool(threshold and threshold.absolute)
    spread = measure_spread(base_values, alpha, absolute, prior)
    if spread is None or current is None:
        return WindowMetric(metric, spread, current, None, None, threshold, NA)
    center = spread.center
    sign = -1.0 if metric.higher_is_better else 1.0  # "went up" -> "got worse"
    relative = (current - center) / abs(center) if center != 0 else None
    if absolute:
        worse_by = sign * (current - center)
        move = worse_by
    else:
        worse_by = sign * relative if relative is not None else math.copysign(math.inf, sign * (current - center))
        move = sign * math.log(current / center) if current > 0 and center > 0 else worse_by
    if threshold is None:
        return WindowMetric(metric, spread, current, relative, worse_by, threshold, UNGATED)
    if spread.band is None:
        noise_move = None
    elif spread.band > 0:
        noise_move = move / spread.band
    else:  # identical baseline runs: any move is beyond their spread
        noise_move = math.copysign(math.inf, move) if move else 0.0
    verdict = classify(worse_by, threshold.value, noise_move)
    return WindowMetric(metric, spread, current, relative, worse_by, threshold, verdict)


def family_size(pairs: Sequence[tuple[Record, list[Record]]], thresholds: Mapping[str, Threshold | None]) -> int:
    """How many metrics a gate judges against a measured spread (a threshold, a current value and
    at least MIN_RUNS baseline values): the family its false-alarm rate is shared over."""
    n = 0
    for current, baselines in pairs:
        for metric in gated_metrics():
            if threshold_for(metric, thresholds) is None or metric_value(current, metric.key) is None:
                continue
            if sum(metric_value(b, metric.key) is not None for b in baselines) >= MIN_RUNS:
                n += 1
    return n


def spread_priors(pairs: Sequence[tuple[Record, list[Record]]],
                  thresholds: Mapping[str, Threshold | None]) -> dict[tuple[str, str], float]:
    """Per (record kind, metric key): the median of the benchmarks' own run-to-run spreads, where
    at least 3 benchmarks of that kind have one (fewer: no prior)."""
    spreads = []
    for current, baselines in pairs:
        for metric in gated_metrics():
            threshold = threshold_for(metric, thresholds)
            values = [v for v in (metric_value(b, metric.key) for b in baselines) if v is not None]
            s = own_spread(values, bool(threshold and threshold.absolute))
            if s is not None:
                spreads.append(((current.kind, metric.key), s))
    return kind_priors(spreads)


def _compare_bench(current: Record, baselines: list[Record], thresholds: Mapping[str, Threshold | None],
                   alpha: float, priors: Mapping[tuple[str, str], float] | None = None) -> WindowBench:
    bench = WindowBench(current, baselines)
    if current.status in _BAD_STATUSES:
        bench.status_change = f"passed -> {current.status}"
    mem_kinds = {b.config.get("peak_mem_kind") for b in baselines}
    for metric in gated_metrics():
        values = [v for v in (metric_value(b, metric.key) for b in baselines) if v is not None]
        cur = metric_value(current, metric.key)
        if not values and cur is None:
            continue
        prior = (priors or {}).get((current.kind, metric.key))
        change = _judge(metric, values, cur, threshold_for(metric, thresholds), alpha, prior)
        if metric.group == "peak_mem" and mem_kinds != {current.config.get("peak_mem_kind")}:
            change.verdict = INCOMPARABLE
        bench.metrics.append(change)
    return bench


def compare_window(baselines: Sequence[Results], current: Results,
                   thresholds: Mapping[str, Threshold | None] | None = None,
                   alpha: float = DEFAULT_FALSE_ALARM) -> WindowComparison:
    """Judge `current` against baseline runs; InputError when nothing can be compared."""
    if not baselines:
        raise InputError("no baseline results file given; pass one or more with --baseline")
    thresholds = DEFAULT_THRESHOLDS if thresholds is None else thresholds
    check_same_environment(list(baselines), "baseline")
    notes: list[str] = []
    indexes = [index_records(b, notes) for b in baselines]
    cur_idx = index_records(current, notes)
    envs = {"baseline": baselines[0].environment, "current": current.environment}
    blocking = environment_differences(envs, ENV_MATCH_KEYS)
    other = [d for d in environment_differences(envs) if d[0] not in ENV_MATCH_KEYS]
    out = WindowComparison(list(baselines), current, [], [], [], blocking, other, alpha, notes)
    matched = False
    pairs: list[tuple[Record, list[Record]]] = []
    for key, cur in cur_idx.items():
        found = [idx[key] for idx in indexes if key in idx]
        if not found:
            out.only_current.append(cur)
            continue
        matched = True
        passed = [r for r in found if r.status == "passed"]
        if not passed:
            out.not_compared.append((cur, f"no baseline run passed ({found[0].status})"))
        elif cur.status not in ("passed", *_BAD_STATUSES):
            out.not_compared.append((cur, f"current status {cur.status}"))
        else:
            pairs.append((cur, passed))
    out.family = max(1, family_size(pairs, thresholds))
    priors = spread_priors(pairs, thresholds)
    out.benches = [_compare_bench(cur, passed, thresholds, out.alpha_per_metric, priors) for cur, passed in pairs]
    names = ", ".join(str(b.path) for b in baselines[:3]) + (" ..." if len(baselines) > 3 else "")
    if not matched:
        raise no_match_error(names, current, len(cur_idx))
    if not out.benches:
        raise nothing_compared_error(names, current, out.not_compared)
    return out
