"""`trainbench report RESULTS... [--out DIR] [--format md,csv,json,html]`.

Merges results files from any number of machines and runs into one comparison report:
DIR/comparison.md, .csv, .json and a self-contained .html with charts. Every input is read
and checked first; outputs are written atomically and never over an input file.
"""

from __future__ import annotations

import argparse
from ..report.writer import FORMATS, write_report
from . import types
from .command import subcommand

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subcommand(subparsers, "report", "merge results files into comparison tables and charts", __doc__)
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results files (JSON) from any machines/runs")
    p.add_argument("--out", default="reports", metavar="DIR", help="output directory (default %(default)s)")
    p.add_argument("--format", type=types.comma_list("--format", lambda: FORMATS), default=FORMATS, metavar="LIST",
                   help=f"comma-separated subset of {','.join(FORMATS)} (default: all)")
    p.add_argument("--name", default="comparison", help="output file stem (default %(default)s)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    # bad input raises TrainbenchError: plugin/cli.py prints it and exits 2
    written = write_report(args.results, args.out, args.format, args.name)
    for path in written:
        print(f"wrote {path}")
    return 0
