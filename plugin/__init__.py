"""pytest-trainbench: training benchmarks for PyTorch on cloud GPUs, as a pytest plugin.

The public surface: workloads to register your own model, the harness to run one outside
pytest, and the results file to read what a session measured.
"""

from .errors import InputError, PerformanceRegression, TrainbenchError
from .harness.run import RunConfig, run
from .records.record import Record
from .records.results import load_results, write_results
from .workloads import Workload, get_workload, register_workload

__all__ = [
    "InputError",
    "PerformanceRegression",
    "Record",
    "RunConfig",
    "TrainbenchError",
    "Workload",
    "get_workload",
    "load_results",
    "register_workload",
    "run",
    "write_results",
]
