"""`trainbench report RESULTS... [--out DIR] [--format md,csv,json,html]`.

Merges results files from any number of machines and runs into one comparison report:
DIR/comparison.md, .csv, .json and a self-contained .html with charts. Every input is read
and checked first; outputs are written atomically and never over an input file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from plugin.atomic import atomic_write_text
from plugin.errors import InputError

__all__ = ["add_parser", "run", "write_report", "FORMATS"]

FORMATS = ("md", "csv", "json", "html")


def _formats(text: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(f.strip().lower() for f in text.split(",") if f.strip()))
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise argparse.ArgumentTypeError(f"{text!r}: choose from {','.join(FORMATS)} (comma separated)")
    return chosen


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "report",
        help="merge results files into comparison tables and charts",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results files (JSON) from any machines/runs")
    p.add_argument("--out", default="reports", metavar="DIR", help="output directory (default %(default)s)")
    p.add_argument("--format", type=_formats, default=FORMATS, metavar="LIST",
                   help=f"comma-separated subset of {','.join(FORMATS)} (default: all)")
    p.add_argument("--name", default="comparison", help="output file stem (default %(default)s)")
    p.set_defaults(func=run)
    return p


def write_report(results: list[str | Path], out: str | Path, formats=FORMATS, name: str = "comparison") -> list[Path]:
    """Build and write the report; returns the paths written. Raises InputError on bad input."""
    from plugin.report.charts import build_charts
    from plugin.report.export import render_csv, render_json
    from plugin.report.html import render_html
    from plugin.report.markdown import render_markdown
    from plugin.report.merge import load_runs, rows_of
    from plugin.report.tables import build_tables

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


def run(args: argparse.Namespace) -> int:
    # bad input raises TrainbenchError: plugin/cli.py prints it and exits 2
    written = write_report(args.results, args.out, args.format, args.name)
    for path in written:
        print(f"wrote {path}")
    return 0
