"""Gate CI on regressions beyond threshold and beyond the run-to-run noise of a window of runs;
change points over a series of runs; the noise of a runner; a machine among its fleet."""

from .compare import Comparison, compare_metric, compare_results
from .changepoints import Step, find_steps
from .fleet import place_in_fleet
from .history import Series, build_history
from .metrics import GatedMetric, register_gated_metric
from .noise import measure_noise
from .spread import Spread, measure_spread
from .stats import shift_test
from .thresholds import DEFAULT_THRESHOLDS, Threshold, parse_thresholds
from .verdict import VERDICTS, classify
from .window import WindowComparison, compare_window

__all__ = [
    "Comparison",
    "compare_metric",
    "compare_results",
    "Step",
    "find_steps",
    "place_in_fleet",
    "Series",
    "build_history",
    "GatedMetric",
    "register_gated_metric",
    "measure_noise",
    "Spread",
    "measure_spread",
    "shift_test",
    "DEFAULT_THRESHOLDS",
    "Threshold",
    "parse_thresholds",
    "VERDICTS",
    "classify",
    "WindowComparison",
    "compare_window",
]
