"""Which metrics the gate compares, which way is better, and which noise evidence they have.

One table (`_TABLE`) and a registry built from it. Each metric belongs to a *group*: the name a
threshold uses in `--max-regression throughput=5%` (a threshold may also name the metric key
itself, which wins over its group).

`per_step` names the within-run samples that carry a metric's noise:
- "step_time": throughput, step time, MFU, cost per epoch, collective bandwidth are functions of
  the step time; their noise is judged from the raw `step_times_s` of both runs (worse = slower).
- "stall_fraction": the stall ratio, per step = input wait / step time (`config.input_wait_s`
  and `step_times_s`, when the harness recorded them).
- None: single numbers per run (peak memory, energy, scaling efficiency), judged by their
  threshold alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import Registry

__all__ = ["GatedMetric", "GATED_METRICS", "register_gated_metric", "gated_metrics", "group_names"]


@dataclass(frozen=True)
class GatedMetric:
    key: str  # key in Record.metrics
    group: str  # threshold name in --max-regression (several keys may share one)
    higher_is_better: bool  # throughput up is good; time, memory, stall, cost down are good
    per_step: str | None  # "step_time", "stall_fraction" or None: see the module docstring
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
    # key                      group         higher  per-step samples  label
    ("samples_per_s", "throughput", True, "step_time", "samples/s", ""),
    ("tokens_per_s", "throughput", True, "step_time", "tokens/s", ""),
    ("step_time_median_s", "step_time", False, "step_time", "median step time", "s"),
    ("mfu", "mfu", True, "step_time", "MFU", ""),
    ("cost_per_epoch_usd", "cost", False, "step_time", "cost/epoch", "USD"),
    ("peak_mem_bytes", "peak_mem", False, None, "peak memory", "B"),
    ("peak_mem_reserved_bytes", "peak_mem", False, None, "peak reserved memory", "B"),
    ("stall_ratio", "stall_ratio", False, "stall_fraction", "stall ratio", ""),
    ("energy_j_per_sample", "energy", False, None, "energy/sample", "J"),
    ("scaling_efficiency", "scaling", True, None, "scaling efficiency", ""),
    ("busbw_gbps", "bandwidth", True, "step_time", "busbw", "GB/s"),
    ("algbw_gbps", "bandwidth", True, "step_time", "algbw", "GB/s"),
)
_ORDER = [row[0] for row in _TABLE]
for _key, _group, _higher, _per_step, _label, _unit in _TABLE:
    register_gated_metric(GatedMetric(_key, _group, _higher, _per_step, _label, _unit))
