"""What a benchmark leaves behind: the record, the results file, the environment it ran in."""

from .atomic import atomic_write, atomic_write_text
from .environment import capture_environment
from .record import Record
from .results import Results, load_results, write_results

__all__ = ["Record", "Results", "atomic_write", "atomic_write_text", "capture_environment",
           "load_results", "write_results"]
