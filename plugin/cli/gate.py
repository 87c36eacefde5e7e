"""`trainbench gate --baseline BASE --current CURRENT`: fail CI on a real slowdown, not on noise.

Exit 0: no regression. 1: at least one benchmark regressed (a gated metric worse than its
threshold and significant, or passed -> failed/OOM). 2: unusable input — unreadable or
corrupt file, other schema, no matching benchmark, or a baseline from another environment
(GPU profile/name/count, torch, CUDA) without `--allow-env-mismatch`. Differences in CPU
model/cores, driver, host or commit are printed and do not block: that is what a gate run
on a changed machine should show, not refuse.
"""

from __future__ import annotations

import argparse
import sys

from .compare import add_comparison_arguments, comparison_from_args
from ..gate.markdown import render_comparison
from ..gate.step_summary import append_step_summary

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "gate",
        help="exit 1 when CURRENT regressed against BASELINE (CI gate)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--baseline", required=True, metavar="BASE", help="baseline results file (JSON)")
    p.add_argument("--current", required=True, metavar="CURRENT", help="current results file (JSON)")
    add_comparison_arguments(p, gate=True)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    # bad input raises TrainbenchError: plugin/cli.py prints it and exits 2
    comparison = comparison_from_args(args.baseline, args.current, args)
    text = render_comparison(comparison, "trainbench gate", allow_env_mismatch=args.allow_env_mismatch)
    print(text)
    append_step_summary(text)
    if comparison.env_blocking and not args.allow_env_mismatch:
        keys = ", ".join(k for k, _ in comparison.env_blocking)
        print(
            f"trainbench gate: error: baseline {args.baseline} comes from another environment "
            f"({keys} differ); re-record the baseline here or pass --allow-env-mismatch",
            file=sys.stderr,
        )
        return 2
    return 1 if comparison.regressed else 0
