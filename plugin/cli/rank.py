"""The per-rank entry point of the distributed benchmarks, started by torchrun:

    torchrun --standalone --nproc-per-node 8 -m trainbench.cli.rank collectives --out /tmp/coll
    torchrun --standalone --nproc-per-node 8 -m trainbench.cli.rank ddp --workload resnet50 \\
        --size full --world-sizes 1,2,4,8 --out /tmp/ddp

    torchrun --standalone --nproc-per-node 8 -m trainbench.cli.rank fsdp --workload llama-1b \\
        --size full --world-sizes 1,2,4,8 --out /tmp/fsdp

The work is in `trainbench.distributed.collectives`, `.ddp` and `.fsdp`; this module only parses.
"""

from __future__ import annotations

import argparse
import sys

from torch.distributed.elastic.multiprocessing.errors import record

from . import types
from ..distributed.bandwidth import OPS
from ..distributed.collectives import DTYPES

__all__ = ["main"]


def _collectives_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="directory for rank files and result.json")
    p.add_argument("--ops", default=",".join(OPS), help=f"comma list of {', '.join(OPS)}")
    p.add_argument("--min-bytes", type=types.positive_int("--min-bytes"), default=1024)
    p.add_argument("--max-bytes", type=types.positive_int("--max-bytes"), default=None, help="default 1 GiB with NCCL, 4 MiB with gloo")
    p.add_argument("--factor", type=types.positive_int("--factor"), default=4, help="size multiplier between steps")
    p.add_argument("--dtype", choices=tuple(DTYPES), default="float32")
    p.add_argument("--warmup", type=types.nonneg_int("--warmup"), default=3)
    p.add_argument("--trials", type=types.positive_int("--trials"), default=10)
    p.add_argument("--iters", type=types.positive_int("--iters"), default=20,
                   help="back-to-back calls per timed trial (default 20, as nccl-tests): a latency-bound "
                        "size timed one call at a time measures the barrier and the clock, not the link")
    p.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    p.add_argument("--timeout", type=types.number("--timeout"), default=600.0, help="process-group timeout, seconds")
    p.add_argument("--topology", default="default", help="label recorded with --results")
    p.add_argument("--results", default=None, help="rank 0 writes a trainbench results file here")


def _ddp_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="directory for rank files, result.json, params")
    p.add_argument("--workload", required=True)
    p.add_argument("--size", default="tiny")
    p.add_argument("--precision", default="fp32")
    p.add_argument("--batch-size", type=types.positive_int("--batch-size"), default=None,
                   help="per-rank micro-batch (per-rank mode) or global batch (global mode); "
                        "default: the workload's batch for the size")
    p.add_argument("--batch-mode", choices=("per-rank", "global"), default="per-rank")
    p.add_argument("--world-sizes", default=None, help="comma list, default 1,2,4,...,WORLD_SIZE")
    p.add_argument("--steps", type=types.positive_int("--steps"), default=10)
    p.add_argument("--warmup", type=types.nonneg_int("--warmup"), default=3)
    p.add_argument("--grad-accum", type=types.positive_int("--grad-accum"), default=1)
    p.add_argument("--seed", type=types.nonneg_int("--seed"), default=0)
    p.add_argument("--bucket-mb", type=types.number("--bucket-mb"), default=25.0, help="DDP gradient bucket size (torch default 25)")
    p.add_argument("--num-workers", type=types.nonneg_int("--num-workers"), default=None)
    p.add_argument("--no-comm-window", dest="comm_window", action="store_false",
                   help="skip the no_sync window (no exposed-communication ratio)")
    p.add_argument("--save-params", action="store_true", help="rank 0 saves final parameters per world size")
    p.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    p.add_argument("--timeout", type=types.number("--timeout"), default=1800.0, help="process-group timeout, seconds")
    p.add_argument("--topology", default="default", help="label recorded with --results")
    p.add_argument("--results", default=None, help="rank 0 writes a trainbench results file here")


def _fsdp_arguments(p: argparse.ArgumentParser) -> None:
    _ddp_arguments(p)  # the same run, sharded instead of replicated (bucket size unused)
    p.add_argument("--finetune", choices=("full", "lora"), default="full", help="fine-tuning mode (lora: llama-1b)")
    p.add_argument("--activation-checkpointing", action="store_true", help="recompute each block in backward")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m trainbench.cli.rank", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="benchmark", required=True)
    _collectives_arguments(sub.add_parser("collectives", help="collective bandwidth (nccl-tests definitions)"))
    _ddp_arguments(sub.add_parser("ddp", help="DDP training scaling over world sizes"))
    _fsdp_arguments(sub.add_parser("fsdp", help="FSDP2 (fully_shard) training scaling over world sizes"))
    return p


@record  # a Python error on a rank lands in torchrun's error file and failure summary
def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.benchmark == "collectives":
        from ..distributed.collectives import run_ranks
    elif args.benchmark == "fsdp":
        from ..distributed.fsdp import run_ranks
    else:
        from ..distributed.ddp import run_ranks
    return run_ranks(args)


if __name__ == "__main__":
    sys.exit(main())
