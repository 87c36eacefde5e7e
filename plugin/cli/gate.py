"""`trainbench gate --baseline A.json B.json ... --current C.json`: fail CI on a real slowdown, not on noise.

--baseline takes several results files, directories (their *.json) or globs: a window of
earlier runs. Per benchmark and metric the gate measures the run-to-run spread over the window
and calls a change a regression only when it is beyond both the threshold and that spread.
Verdicts: regression, suspicious (beyond the threshold, inside the noise), within noise,
insufficient data (fewer than 3 baseline runs: the spread is not measured), improvement.

`--fleet DIR --current R.json` instead places this machine's throughput among other machines of
the same --gpu profile and flags it below --fleet-percentile.

Exit 0: no regression. 1: a benchmark regressed (or passed -> failed/OOM; or suspicious with
--fail-on-suspicious; or below the fleet). 2: unusable input -- unreadable or corrupt file,
other schema, empty directory, no matching benchmark, a window mixing GPU profiles, or a
baseline from another environment (GPU profile/name/count, torch, CUDA) without
`--allow-env-mismatch`. CPU model/cores, driver, host or commit differences are printed only.
"""

from __future__ import annotations

import argparse
import sys

from tabulate import tabulate

from ..errors import InputError
from ..gate.files import load_series
from ..gate.fleet import BELOW, place_in_fleet
from ..gate.step_summary import append_step_summary
from ..gate.thresholds import DEFAULT_THRESHOLDS, parse_thresholds
from ..gate.window import DEFAULT_FALSE_ALARM, compare_window
from ..gate.window_markdown import render_window
from ..records.results import load_results
from ..report.cells import format_metric, record_label
from . import types
from .command import subcommand

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subcommand(subparsers, "gate", "exit 1 when CURRENT regressed against a window of BASELINE runs (CI gate)", __doc__)
    p.add_argument("--baseline", nargs="+", metavar="BASE",
                   help="baseline results files, directories or globs (a window of earlier runs)")
    p.add_argument("--current", required=True, metavar="CURRENT", help="current results file (JSON)")
    p.add_argument("--fleet", nargs="+", metavar="DIR",
                   help="results of other machines of the same --gpu profile (files, directories, globs)")
    p.add_argument("--fleet-percentile", type=types.number("--fleet-percentile", 0, 100), default=10.0,
                   help="flag this machine below this percentile of the fleet (default %(default)g)")
    p.add_argument("--max-regression", type=types.domain("--max-regression", parse_thresholds),
                   default=dict(DEFAULT_THRESHOLDS), metavar="SPEC",
                   help="allowed worsening per metric, e.g. throughput=5%%,peak_mem=10%%,stall_ratio=3pp "
                   "(off disables one); defaults: "
                   + ",".join(f"{k}={v}" for k, v in DEFAULT_THRESHOLDS.items()).replace("%", "%%"))
    p.add_argument("--alpha", type=types.probability("--alpha"), default=DEFAULT_FALSE_ALARM,
                   help="false-alarm rate of the whole gate: the chance that identical code is flagged on any metric "
                        "if the noise is what the window measured; each of the m metrics' bands is drawn at "
                        "alpha/m (default %(default)g)")
    p.add_argument("--fail-on-suspicious", action="store_true",
                   help="exit 1 also when a change is beyond its threshold but inside the measured noise")
    p.add_argument("--allow-env-mismatch", action="store_true",
                   help="gate even when GPU profile/name/count, torch or CUDA differ (printed anyway)")
    p.set_defaults(func=run)
    return p


def _run_fleet(args: argparse.Namespace) -> int:
    current = load_results(args.current)
    placed = place_in_fleet(load_series(args.fleet, "--fleet"), current, args.fleet_percentile)
    rows = [[record_label(m.record), m.metric.label, format_metric(m.metric.key, m.current),
             f"{format_metric(m.metric.key, min(m.fleet))} .. {format_metric(m.metric.key, max(m.fleet))}",
             len(m.fleet), "n/a" if m.percentile is None else f"{m.percentile:.0f}", m.verdict] for m in placed]
    below = [m for m in placed if m.verdict == BELOW]
    head = (f"## trainbench gate --fleet: FAIL — {len(below)} metric(s) below the fleet's "
            f"{args.fleet_percentile:g}th percentile" if below else
            "## trainbench gate --fleet: PASS — this machine is in the fleet's range")
    text = "\n".join([head, "", tabulate(rows, ["benchmark", "metric", "this machine", "fleet range", "machines",
                                                 "percentile", "verdict"], tablefmt="github", disable_numparse=True)])
    print(text)
    append_step_summary(text)
    return 1 if below else 0


def run(args: argparse.Namespace) -> int:
    # bad input raises TrainbenchError: cli.main prints it and exits 2
    if args.fleet:
        return _run_fleet(args)
    if not args.baseline:
        raise InputError("--baseline: give one or more baseline results files (or --fleet DIR)")
    baselines = load_series(args.baseline, "--baseline")
    comparison = compare_window(baselines, load_results(args.current), args.max_regression, args.alpha)
    text = render_window(comparison, "trainbench gate", args.allow_env_mismatch, args.fail_on_suspicious)
    print(text)
    append_step_summary(text)
    if comparison.env_blocking and not args.allow_env_mismatch:
        keys = ", ".join(k for k, _ in comparison.env_blocking)
        print(f"trainbench gate: error: baseline {baselines[0].path} comes from another environment "
              f"({keys} differ); re-record the baseline here or pass --allow-env-mismatch", file=sys.stderr)
        return 2
    failed = comparison.regressed or (args.fail_on_suspicious and comparison.suspicious)
    return 1 if failed else 0
