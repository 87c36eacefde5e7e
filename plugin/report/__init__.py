"""Reports: the session summary, and comparison reports merged across results files."""

from .writer import FORMATS, write_report
from .envdiff import environment_differences
from .merge import Run, load_runs
from .session_summary import summary_lines
from .summary import write_summary_markdown

__all__ = [
    "summary_lines",
    "write_summary_markdown",
    "FORMATS",
    "write_report",
    "environment_differences",
    "Run",
    "load_runs",
]
