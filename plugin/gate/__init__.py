"""Compare two results files and gate CI on regressions that are beyond threshold and not noise."""

from .compare import Comparison, compare_metric, compare_results
from .metrics import GatedMetric, register_gated_metric
from .stats import shift_test
from .thresholds import DEFAULT_THRESHOLDS, Threshold, parse_thresholds

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
