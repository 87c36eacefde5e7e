"""A report's tables as one Markdown document (tabulate, GitHub flavour)."""

from __future__ import annotations

from typing import Sequence

from tabulate import tabulate

from .tables import Table

__all__ = ["render_markdown"]


def render_markdown(tables: Sequence[Table], absent_charts: Sequence[str] = ()) -> str:
    out = ["# trainbench comparison report", ""]
    for t in tables:
        out += [f"## {t.title}", ""]
        if t.note:
            out += [f"_{t.note}_", ""]
        out += [tabulate(t.rows, t.headers, tablefmt="github", disable_numparse=True), ""]
    if absent_charts:
        out += ["Charts (HTML report) left out for lack of data: " + "; ".join(absent_charts) + ".", ""]
    return "\n".join(out)
