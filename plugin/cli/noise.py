"""`trainbench noise RESULTS...`: the run-to-run spread of repeated runs, per benchmark and metric,
and the smallest regression a window gate of these runs can catch at --alpha.

Feed it 3+ results files of the same code on the same machine (a directory works). A threshold
below the "smallest catchable" column makes the gate answer "suspicious" instead of
"regression" for changes of that size: pick --max-regression at or above it.
"""

from __future__ import annotations

import argparse

from tabulate import tabulate

from ..gate.files import load_series
from ..gate.noise import measure_noise
from ..gate.window import DEFAULT_FALSE_ALARM
from ..report.cells import format_metric
from . import types
from .command import subcommand

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subcommand(subparsers, "noise", "run-to-run spread of repeated runs and the smallest catchable regression", __doc__)
    p.add_argument("paths", nargs="+", metavar="RESULTS", help="results files, directories or globs")
    p.add_argument("--alpha", type=types.probability("--alpha"), default=DEFAULT_FALSE_ALARM,
                   help="false-alarm rate of the whole gate, shared over its metrics as the gate shares it "
                        "(default %(default)g)")
    p.set_defaults(func=run)
    return p


def _pct(x: float | None, absolute: bool) -> str:
    if x is None:
        return "n/a"
    return f"{x * 100:.2g}pp" if absolute else f"{x * 100:.2g}%"


def run(args: argparse.Namespace) -> int:
    runs = load_series(args.paths, "noise")
    rows = []
    found = measure_noise(runs, args.alpha)
    for r in found:
        s = r.spread
        rows.append([r.label, r.metric.label, str(s.runs), format_metric(r.metric.key, s.center),
                     "±" + _pct(s.own if s.own is not None else s.spread, s.absolute), _pct(r.detectable, s.absolute),
                     str(r.threshold) if r.threshold else "off",
                     "ok" if r.threshold is None or r.detectable is None or r.detectable <= r.threshold.value
                     else "raise it"])
    gated = sum(r.threshold is not None for r in found)
    print(f"## trainbench noise: {len(runs)} runs, false-alarm rate {args.alpha:g} for a whole gate of these "
          f"runs ({gated} metrics with a threshold: {args.alpha / max(1, gated):.2g} each)\n")
    print(tabulate(rows, ["benchmark", "metric", "runs", "median", "run-to-run spread (1σ)",
                          "smallest catchable regression", "default threshold", "threshold vs noise"],
                   tablefmt="github", disable_numparse=True))
    return 0
