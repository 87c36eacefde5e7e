"""DDP training scaling, one process per rank under torchrun:

    torchrun --standalone --nproc-per-node 8 -m trainbench.cli.rank ddp --workload resnet50 \\
        --size full --world-sizes 1,2,4,8 --out /tmp/ddp

One launch measures every world size k in --world-sizes: ranks 0..k-1 form a process group and
train the workload under DistributedDataParallel while the other ranks wait at a barrier on
the CPU (gloo) control group, so torchrun starts once and the 1-rank baseline runs on the same
machine in the same state as the N-rank run.

Each k runs the lead's harness (`build_trainer` + `measure`) twice on the same ranks:
  1. synchronized DDP steps -> throughput (global samples / slowest rank's wall time), step
     times (per step the slowest rank), final parameters (`--save-params`);
  2. the same steps under `no_sync()` (no gradient all-reduce) -> the exposed-communication
     ratio (plugin/distributed/scaling.py). `--no-comm-window` skips it.

Batch: `--batch-mode per-rank` (default, weak scaling) keeps the micro-batch per rank fixed, so
the global batch grows with k, as DDP is usually run; `--batch-mode global` keeps the global
batch fixed and splits it (it must divide by every k): then k ranks and 1 rank see the same
samples per step and must reach the same parameters. Data: a torch DistributedSampler over
one seeded data set (same permutation on every rank; the union of the ranks' micro-batches at
step s is the 1-rank batch at step s).
"""

from __future__ import annotations

import gc
import os
from typing import Any, Callable

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

from ..records.atomic import atomic_write
from ..data import LoaderConfig, make_loader
from .topology import detect_topology, effective_nccl_env
from .worker import FaultPoint, RankContext, init_ranks
from ..harness.measure import Measurement, measure
from ..harness.run import RunConfig, auto_workers, build_trainer
from ..workloads import get_workload

__all__ = ["run_ranks", "default_world_sizes", "params_file", "rank_trainer", "run_output", "release", "sweep"]


def default_world_sizes(world: int) -> list[int]:
    """1, 2, 4, ... below `world`, then `world` itself."""
    sizes, k = [], 1
    while k < world:
        sizes.append(k)
        k *= 2
    return sizes + [world]


def params_file(out: str | os.PathLike, k: int) -> str:
    return os.path.join(out, f"params_world{k}.pt")


def _workers(ctx: RankContext) -> int:
    """Loader workers per rank: the harness's rule, the node's cores shared among its ranks."""
    return auto_workers(ctx.device, gpus=int(os.environ.get("LOCAL_WORLD_SIZE", ctx.world_size)))


def _per_rank_batch(args: Any, k: int, default: int) -> int:
    if args.batch_mode == "per-rank":
        return args.batch_size or default
    global_batch = args.batch_size or default
    if global_batch % k:
        raise ValueError(f"--batch-mode global: global batch {global_batch} does not divide by {k} ranks")
    return global_batch // k


def rank_trainer(args: Any, ctx: RankContext, k: int, fault: FaultPoint, wrap: Callable | None = None,
                 **run_fields: Any):
    """This rank's trainer for world size k: its DistributedSampler share of one seeded data set
    and the lead's `build_trainer`. Returns (trainer, per-rank micro-batch, samples per step)."""
    workload = get_workload(args.workload)
    b = _per_rank_batch(args, k, workload.default_batch_size(args.size))
    per_step = b * args.grad_accum  # samples per optimizer step on this rank
    # one epoch = the synchronized window exactly; the no_sync window starts a second epoch
    n = per_step * k * (args.warmup + args.steps)
    dataset = workload.dataset(args.size, n, args.seed)
    sampler = DistributedSampler(dataset, num_replicas=k, rank=ctx.rank, shuffle=True, seed=args.seed, drop_last=True)
    workers = _workers(ctx) if args.num_workers is None else args.num_workers
    loader = make_loader(dataset, LoaderConfig(batch_size=b, num_workers=workers, pin_memory=ctx.device.type == "cuda"),
                         sampler)
    cfg = RunConfig(workload=args.workload, size=args.size, precision=args.precision, batch_size=b,
                    steps=args.steps, warmup=args.warmup, grad_accum=args.grad_accum, seed=args.seed,
                    device=str(ctx.device), **run_fields)
    trainer = build_trainer(cfg, loader, wrap=wrap)
    trainer.batches = fault.wrap(trainer.batches)
    return trainer, b, per_step


def run_output(b: int, synced: Measurement, local: Measurement | None) -> dict[str, Any]:
    """What a rank reports for one world size (the synchronized and the no-sync window)."""
    return {
        "per_rank_batch": b,
        "wall_s": synced.wall_s,
        "samples": synced.samples,
        "step_times_s": synced.step_times_s,
        "input_wait_s": synced.input_wait_s,
        "losses": synced.losses,
        "peak_mem_bytes": synced.peak_mem_bytes,
        "peak_mem_kind": synced.peak_mem_kind,
        "local_step_times_s": local.step_times_s if local is not None else None,
    }


def release(trainer: Any, device: torch.device) -> None:
    del trainer
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def _train(args: Any, ctx: RankContext, k: int, group: Any, fault: FaultPoint) -> dict[str, Any]:
    cuda = ctx.device.type == "cuda"
    trainer, b, per_step = rank_trainer(args, ctx, k, fault, wrap=lambda model: DistributedDataParallel(
        model, device_ids=[ctx.device.index] if cuda else None, process_group=group, bucket_cap_mb=args.bucket_mb))
    with trainer.precision.context(ctx.device):
        synced = measure(trainer, warmup=args.warmup, steps=args.steps, samples_per_step=per_step)
        if args.save_params and ctx.rank == 0:
            state = {k_: v.detach().cpu() for k_, v in trainer.model.module.state_dict().items()}
            atomic_write(params_file(args.out, k), lambda f: torch.save(state, f))
        local = None
        if args.comm_window:
            # no communication at all: no gradient all-reduce (no_sync), and no buffer broadcast,
            # which DDP does before every forward even under no_sync (BatchNorm running stats)
            trainer.model.broadcast_buffers = False
            with trainer.model.no_sync():
                local = measure(trainer, warmup=1, steps=args.steps, samples_per_step=per_step)
    out = run_output(b, synced, local)
    release(trainer, ctx.device)
    return out


def _combine(k: int, runs: list[dict[str, Any]], args: Any) -> dict[str, Any]:
    """One world size over its k ranks: slowest rank per step, global samples, mean loss."""
    steps = [max(s) for s in zip(*(r["step_times_s"] for r in runs))]
    losses = np.mean([r["losses"] for r in runs], axis=0).tolist()  # global-batch loss per step
    out = {
        "world_size": k,
        "per_rank_batch": runs[0]["per_rank_batch"],
        "global_batch": runs[0]["per_rank_batch"] * k * args.grad_accum,
        "samples": sum(r["samples"] for r in runs),
        "wall_s": max(r["wall_s"] for r in runs),
        "step_times_s": steps,
        "input_wait_s": [max(w) for w in zip(*(r["input_wait_s"] for r in runs))],
        "losses": losses,
        "peak_mem_bytes": max(r["peak_mem_bytes"] or 0 for r in runs) or None,
        "peak_mem_kind": runs[0]["peak_mem_kind"],
        "local_step_times_s": None,
    }
    if runs[0]["local_step_times_s"] is not None:
        out["local_step_times_s"] = [max(s) for s in zip(*(r["local_step_times_s"] for r in runs))]
    return out


def sweep(args: Any, train: Callable, benchmark: str, extra: dict[str, Any],
          finish: Callable[[list[dict[str, Any]], list[dict[str, Any]]], None] | None = None) -> int:
    """Every world size in --world-sizes, one after the other, in this launch: ranks 0..k-1
    run `train(args, ctx, k, group, fault)`, rank 0 combines them, writes result.json (with
    `extra` fields) and the results file. `finish(rows, runs)` adds to each combined row."""
    get_workload(args.workload)  # unknown name -> error listing the known ones, before any rank joins
    ctx = init_ranks(args.backend, args.out, args.timeout)
    sizes = default_world_sizes(ctx.world_size) if not args.world_sizes else \
        sorted({int(s) for s in args.world_sizes.split(",")})
    if sizes[0] < 1 or sizes[-1] > ctx.world_size:
        raise ValueError(f"--world-sizes {sizes}: each must be in 1..{ctx.world_size} (the launched ranks)")
    fault = FaultPoint(ctx.rank)
    mine, combined = {}, []
    for k in sizes:
        # every rank takes part in creating every group (new_group is collective)
        group = None if k == ctx.world_size else dist.new_group(list(range(k)), backend=ctx.backend)
        run = train(args, ctx, k, group, fault) if ctx.rank < k else None
        if run is not None:
            mine[k] = {key: run[key] for key in ("wall_s", "samples", "per_rank_batch")}
        runs = [r for r in ctx.gather(run) if r is not None]
        if ctx.rank == 0:
            combined.append(_combine(k, runs, args))
            if finish is not None:
                finish(combined[-1], runs)
        if group is not None:
            dist.destroy_process_group(group)
    ctx.write_rank({"runs": mine})
    if ctx.rank == 0:
        result = {
            "benchmark": benchmark,
            "workload": args.workload,
            "size": args.size,
            "precision": args.precision,
            "batch_mode": args.batch_mode,
            **extra,
            "steps": args.steps,
            "warmup": args.warmup,
            "grad_accum": args.grad_accum,
            "seed": args.seed,
            "backend": ctx.backend,
            "launched_ranks": ctx.world_size,
            "nccl_env": effective_nccl_env(os.environ),
            "detected": detect_topology(),
            "runs": combined,
        }
        ctx.write_result(result)
        if args.results:
            from .fold import write_results_file

            write_results_file(args.results, result, topology=args.topology)
    ctx.close()
    return 0


def run_ranks(args: Any) -> int:
    """This rank's part of the benchmark; `args` as parsed by `trainbench.cli.rank`."""
    return sweep(args, _train, "ddp", {"bucket_mb": args.bucket_mb})
