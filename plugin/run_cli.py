"""`trainbench bench`: one training benchmark outside pytest, printing the metrics as JSON."""

from __future__ import annotations

import argparse
import json

from plugin.harness.precision import PRECISIONS
from plugin.harness.run import RunConfig, run
from plugin.session import resolve_profile

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="measure one workload once and print its metrics (JSON)")
    p.add_argument("--workload", required=True)
    p.add_argument("--size", default="tiny", choices=("tiny", "full"))
    p.add_argument("--precision", default="fp32", choices=tuple(PRECISIONS))
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--gpu", default="auto")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    profile, spec, device = resolve_profile(args.gpu)
    cfg = RunConfig(workload=args.workload, size=args.size, precision=args.precision, batch_size=args.batch_size,
                    steps=args.steps, warmup=args.warmup, grad_accum=args.grad_accum, device=str(device))
    peak = spec.peak_flops(args.precision) if spec else None
    out = run(cfg, peak_flops_per_s=peak)
    print(json.dumps({"gpu": profile, "workload": args.workload, **out.metrics}, indent=1))
    return 0
