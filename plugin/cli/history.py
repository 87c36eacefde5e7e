"""`trainbench history DIR_OR_FILES --out DIR`: change points over a series of runs.

Orders the results files by start time and commit; per benchmark and gated metric finds the
steps (ruptures PELT, penalty scaled to the measured run-to-run noise) and says "regressed at
commit X by Y% (runs i..j)". Writes DIR/history.md and DIR/history.html, one chart per metric.
Exit 0 (a report), 2 on unusable input (fewer than 5 files, empty directory, other schema,
files of different GPU profiles).
"""

from __future__ import annotations

import argparse

from ..gate.files import load_series
from ..gate.history import MIN_HISTORY, build_history, describe_step
from . import types
from .command import subcommand

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subcommand(subparsers, "history", "change points and noise over a series of results files", __doc__)
    p.add_argument("paths", nargs="+", metavar="DIR_OR_FILES", help="results files, directories or globs")
    p.add_argument("--out", required=True, metavar="DIR", help="directory for history.md, history.html, charts/")
    p.add_argument("--min-runs", type=types.int_at_least("--min-runs", 4), default=MIN_HISTORY,
                   help="refuse series shorter than this (default %(default)s)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..report.history import write_history  # matplotlib: only when writing

    runs = load_series(args.paths, "history")
    series = build_history(runs, args.min_runs)
    md, html = write_history(runs, series, args.out)
    stepped = [(s, st) for s in series for st in s.steps]
    for s, st in stepped:
        print(f"{s.label}: {s.metric.label} {describe_step(s, st)}")
    print(f"{len(runs)} runs, {len(series)} metric series, {len(stepped)} step(s) detected; wrote {md} and {html}")
    return 0
