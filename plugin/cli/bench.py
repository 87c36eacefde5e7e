"""`trainbench bench`: one training benchmark outside pytest, printing the metrics as JSON."""

from __future__ import annotations

import argparse
import json

from ..harness.precision import PRECISIONS
from ..harness.run import RunConfig, run
from .progress import add_progress_option, cli_progress
from .types import gpu, nonneg_int, positive_int
from ..catalog.profile import resolve_profile

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="measure one workload once and print its metrics (JSON)")
    p.add_argument("--workload", required=True)
    p.add_argument("--size", default="tiny", choices=("tiny", "full"))
    p.add_argument("--precision", default="fp32", choices=tuple(PRECISIONS))
    p.add_argument("--batch-size", type=positive_int("--batch-size"), default=None)
    p.add_argument("--steps", type=positive_int("--steps"), default=10)
    p.add_argument("--warmup", type=nonneg_int("--warmup"), default=3)
    p.add_argument("--grad-accum", type=positive_int("--grad-accum"), default=1)
    p.add_argument("--num-workers", type=nonneg_int("--num-workers"), default=0,
                   help="loader worker processes (synthetic data: 0 keeps it in the training process)")
    p.add_argument("--gpu", type=gpu(), default="auto")
    add_progress_option(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    profile, spec, device = resolve_profile(args.gpu)
    cfg = RunConfig(workload=args.workload, size=args.size, precision=args.precision, batch_size=args.batch_size,
                    steps=args.steps, warmup=args.warmup, grad_accum=args.grad_accum, device=str(device),
                    num_workers=args.num_workers)
    with cli_progress(args.progress, f"{args.workload} {args.precision}"):
        out = run(cfg, gpu=spec)
    print(json.dumps({"gpu": profile, "workload": args.workload, **out.metrics}, indent=1))
    return 0
