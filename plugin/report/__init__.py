"""Reports: the session summary, and comparison reports merged across results files."""

from plugin.report.command import FORMATS, write_report
from plugin.report.envdiff import environment_differences
from plugin.report.merge import Run, load_runs
from plugin.report.summary import summary_table, write_summary_markdown

__all__ = [
    "summary_table",
    "write_summary_markdown",
    "FORMATS",
    "write_report",
    "environment_differences",
    "Run",
    "load_runs",
]
