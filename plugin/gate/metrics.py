"""Which metrics the gate compares, which way is better, and which noise evidence they have.

One table (`_TABLE`) and a registry built from it. Each metric belongs to a *group*: the name a
threshold uses in `--max-regression throughput=5%` (a threshold may also name the metric key
itself, which wins over its group).

`timed` metrics are functions of the step time (throughput, MFU, cost per epoch, bandwidth of
a timed collective): their noise is judged from the raw `step_times_s` of both runs. The others
(peak memory, stall ratio, energy, scaling efficiency) are single numbers per run, judged by
their threshold alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from plugin.registry import Registry

__all__ = ["GatedMetric", "GATED_METRICS", "register_gated_metric", "gated_metrics", "group_names"]


@dataclass(frozen=True)
class GatedMetric:
    key: str  # key in Record.metrics
    group: str  # threshold name in --max-regression (several keys may share one)
    higher_is_better: bool  # throughput up is good; time, memory, stall, cost down are good
    timed: bool  # derived from step time: significance comes from step_times_s
    label: str  # column text in tables
    unit: str = ""  # printed after values ("" for ratios shown in %)


GATED_METRICS: Registry[GatedMetric] = Registry("gated metric", "--max-regression")


def register_gated_metric(metric: GatedMetric) -> GatedMetric:
    return GATED_METRICS.register(metric.key, metric)


def gated_metrics() -> list[GatedMetric]:
    return [GATED_METRICS.get(k) for k in _ORDER if k in GATED_METRICS] + [
        GATED_METRICS.get(k) for k in GATED_METRICS.names() if k not in _ORDER
    ]


def group_names() -> list[str]:
    return sorted({m.group for m in gated_metrics()})


_TABLE = (
    # key                      group         higher timed  label
    ("samples_per_s", "throughput", True, True, "samples/s", ""),
    ("tokens_per_s", "throughput", True, True, "tokens/s", ""),
    ("step_time_median_s", "step_time", False, True, "median step time", "s"),
    ("mfu", "mfu", True, True, "MFU", ""),
    ("cost_per_epoch_usd", "cost", False, True, "cost/epoch", "USD"),
    ("peak_mem_bytes", "peak_mem", False, False, "peak memory", "B"),
    ("peak_mem_reserved_bytes", "peak_mem", False, False, "peak reserved memory", "B"),
    ("stall_ratio", "stall_ratio", False, False, "stall ratio", ""),
    ("energy_j_per_sample", "energy", False, False, "energy/sample", "J"),
    ("scaling_efficiency", "scaling", True, False, "scaling efficiency", ""),
    ("busbw_gbps", "bandwidth", True, True, "busbw", "GB/s"),
    ("algbw_gbps", "bandwidth", True, True, "algbw", "GB/s"),
)
_ORDER = [row[0] for row in _TABLE]
for _key, _group, _higher, _timed, _label, _unit in _TABLE:
    register_gated_metric(GatedMetric(_key, _group, _higher, _timed, _label, _unit))
