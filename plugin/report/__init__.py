"""Reports: the session summary (and comparison reports across result files)."""

from plugin.report.summary import summary_table, write_summary_markdown

__all__ = ["summary_table", "write_summary_markdown"]
