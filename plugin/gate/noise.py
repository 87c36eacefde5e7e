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
from .spread import MIN_RUNS, Spread, detectable_move, measure_spread
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
    found = []  # (label, metric, values, threshold) with a measurable spread
    for key, per_metric in values.items():
        for m in gated_metrics():
            vs = per_metric.get(m.key)
            threshold = threshold_for(m, DEFAULT_THRESHOLDS)
            spread = measure_spread(vs or [], alpha, bool(threshold and threshold.absolute))
            if spread is not None and spread.spread is not None:
                found.append((labels[key], m, vs, threshold))
    # the gate shares alpha over the metrics it judges (window.family_size): so does this figure
    each = alpha / max(1, sum(t is not None for *_, t in found))
    out = []
    for label, m, vs, threshold in found:
        spread = measure_spread(vs, each, bool(threshold and threshold.absolute))
        out.append(NoiseRow(label, m, spread, detectable_move(spread, m.higher_is_better), threshold))
    if not out:
        raise InputError(f"noise: no benchmark passed in {MIN_RUNS}+ of the {len(runs)} files; nothing to measure")
    return out
