"""Noise of this runner, measured: per benchmark and metric, the run-to-run spread over repeated
runs of one code, and the smallest regression a window gate of those runs can catch at the
chosen false-alarm rate (for the whole gate, shared over its metrics as the gate shares it).
What a user needs to pick thresholds instead of guessing them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..errors import InputError
from ..records.results import Results
from ..report.cells import record_label
from .compare import identity
from .metrics import GatedMetric, gated_metrics
from .spread import MIN_RUNS, Spread, detectable_move, kind_priors, measure_spread, own_spread
from .thresholds import DEFAULT_THRESHOLDS, Threshold, threshold_for
from .window import check_same_environment, metric_value

__all__ = ["NoiseRow", "measure_noise"]


@dataclass
class NoiseRow:
    label: str
    metric: GatedMetric
    spread: Spread
    detectable: float | None  # smallest worsening flagged as a regression, threshold's unit
    threshold: Threshold | None


def measure_noise(runs: Sequence[Results], alpha: float) -> list[NoiseRow]:
    if len(runs) < MIN_RUNS:
        raise InputError(f"noise needs at least {MIN_RUNS} results files of repeated runs, got {len(runs)}; "
                         f"run the same benchmarks several times on one machine first")
    check_same_environment(list(runs), "noise")
    values: dict[tuple, dict[str, list[float]]] = {}
    labels: dict[tuple, str] = {}
    for res in runs:
        for rec in res.records:
            if rec.status != "passed":
                continue
            key = identity(rec)
            labels.setdefault(key, record_label(rec))
            for m in gated_metrics():
                v = metric_value(rec, m.key)
                if v is not None:
                    values.setdefault(key, {}).setdefault(m.key, []).append(v)
    found = []  # (kind, label, metric, values, threshold, own spread) with a measurable spread
    for key, per_metric in values.items():
        for m in gated_metrics():
            threshold = threshold_for(m, DEFAULT_THRESHOLDS)
            own = own_spread(per_metric.get(m.key) or [], bool(threshold and threshold.absolute))
            if own is not None:
                found.append((key[0], labels[key], m, per_metric[m.key], threshold, own))
    # as the gate judges (window.py): alpha shared over the metrics with a threshold, and each
    # spread pooled with the median spread of its kind where 3+ benchmarks of the kind have one
    each = alpha / max(1, sum(f[4] is not None for f in found))
    priors = kind_priors(((kind, m.key), own) for kind, _, m, _, _, own in found)
    out = []
    for kind, label, m, vs, threshold, _ in found:
        spread = measure_spread(vs, each, bool(threshold and threshold.absolute), priors.get((kind, m.key)))
        out.append(NoiseRow(label, m, spread, detectable_move(spread, m.higher_is_better), threshold))
    if not out:
        raise InputError(f"noise: no benchmark passed in {MIN_RUNS}+ of the {len(runs)} files; nothing to measure")
    return out
