"""Write the comparison report: every input read and checked first, outputs written atomically
and never over an input file."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..records.atomic import atomic_write_text

__all__ = ["FORMATS", "write_report"]

FORMATS = ("md", "csv", "json", "html")


def write_report(results: list[str | Path], out: str | Path, formats=FORMATS, name: str = "comparison") -> list[Path]:
    """Build and write the report; returns the paths written. Raises InputError on bad input."""
    from .charts import build_charts
    from .export import render_csv, render_json
    from .html import render_html
    from .markdown import render_markdown
    from .merge import load_runs, rows_of
    from .tables import build_tables

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a directory; pick a directory")
    targets = {fmt: out / f"{name}.{fmt}" for fmt in formats}
    inputs = {Path(p).resolve() for p in results}
    clash = [str(t) for t in targets.values() if t.resolve() in inputs]
    if clash:
        raise InputError(f"report output {clash[0]} is one of the input files; choose another --out or --name")
    runs = load_runs(results)  # every input checked before anything is written
    rows = rows_of(runs)
    tables = build_tables(runs, rows)
    charts, absent = build_charts(rows) if "html" in formats else ([], [])
    render = {
        "md": lambda: render_markdown(tables, absent),
        "csv": lambda: render_csv(rows),
        "json": lambda: render_json(runs, rows),
        "html": lambda: render_html(tables, charts, absent),
    }
    texts = {fmt: render[fmt]() for fmt in formats}  # render all, then write
    return [atomic_write_text(targets[fmt], texts[fmt]) for fmt in formats]
