"""`trainbench compare BASE CURRENT`: per matching benchmark, every gated metric's change.

Informational: exits 0 whatever changed (2 on unusable input). Environment differences are
printed, not refused; `trainbench gate` is the command that fails CI.
"""

from __future__ import annotations

import argparse

from ..gate.compare import DEFAULT_ALPHA, Comparison, compare_results
from ..gate.markdown import render_comparison
from ..gate.step_summary import append_step_summary
from ..gate.thresholds import DEFAULT_THRESHOLDS, parse_thresholds
from ..records.results import load_results
from . import types
from .command import subcommand

__all__ = ["add_parser", "add_comparison_arguments", "comparison_from_args", "run"]


def add_comparison_arguments(p: argparse.ArgumentParser, gate: bool = False) -> None:
    p.add_argument(
        "--max-regression",
        type=types.domain("--max-regression", parse_thresholds),
        default=dict(DEFAULT_THRESHOLDS),
        metavar="SPEC",
        help="allowed worsening per metric, e.g. throughput=5%%,peak_mem=10%%,stall_ratio=3pp "
        "(off disables one); defaults: "
        + ",".join(f"{k}={v}" for k, v in DEFAULT_THRESHOLDS.items()).replace("%", "%%"),
    )
    p.add_argument(
        "--alpha",
        type=types.probability("--alpha"),
        default=DEFAULT_ALPHA,
        help="significance level of the one-sided rank test on step times (default %(default)s)",
    )
    if gate:  # compare never refuses, so only the gate has the override
        p.add_argument(
            "--allow-env-mismatch",
            action="store_true",
            help="gate even when GPU profile/name/count, torch or CUDA differ (printed anyway)",
        )


def comparison_from_args(base_path: str, current_path: str, args: argparse.Namespace) -> Comparison:
    base, current = load_results(base_path), load_results(current_path)
    return compare_results(base, current, args.max_regression, args.alpha)


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subcommand(subparsers, "compare", "compare two results files benchmark by benchmark", __doc__)
    p.add_argument("base", metavar="BASE", help="baseline results file (JSON)")
    p.add_argument("current", metavar="CURRENT", help="current results file (JSON)")
    add_comparison_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    # bad input raises TrainbenchError: plugin/cli.py prints it and exits 2
    comparison = comparison_from_args(args.base, args.current, args)
    text = render_comparison(comparison, "trainbench compare", gating=False)
    print(text)
    append_step_summary(text)
    return 0
