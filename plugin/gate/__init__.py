"""Compare two results files and gate CI on regressions that are beyond threshold and not noise."""

from plugin.gate.compare import Comparison, compare_metric, compare_results
from plugin.gate.metrics import GatedMetric, register_gated_metric
from plugin.gate.stats import shift_test
from plugin.gate.thresholds import DEFAULT_THRESHOLDS, Threshold, parse_thresholds

__all__ = [
    "Comparison",
    "compare_metric",
    "compare_results",
    "GatedMetric",
    "register_gated_metric",
    "shift_test",
    "DEFAULT_THRESHOLDS",
    "Threshold",
    "parse_thresholds",
]
