"""FSDP2 training scaling, one process per rank under torchrun:

    torchrun --standalone --nproc-per-node 8 -m trainbench.cli.rank fsdp --workload llama-1b \\
        --size full --world-sizes 1,2,4,8 --out /tmp/fsdp

As the DDP benchmark (`ddp.py`: one launch, every world size k on ranks 0..k-1, the others at
a barrier), with `torch.distributed.fsdp.fully_shard` instead of DDP: each repeated block is
its own FSDP unit (all-gathered just before its forward/backward, resharded after), then the
root takes the rest (embeddings, final norm, tied head). Weights, gradients and optimizer
state are sharded k ways (full shard, ZeRO-3).

Each k measures with the lead's harness:
  1. synchronized steps -> throughput, step times, per-rank peak memory (CUDA allocator, or
     process RSS on CPU) and the exact per-rank bytes of the sharded state (local shards of
     weights + grads + optimizer state, from the DTensors), final parameters (`--save-params`,
     gathered to full tensors);
  2. the same steps with `set_requires_gradient_sync(False)` (no gradient reduce-scatter; the
     all-gathers of the weights still run) -> exposed reduce-scatter, as DDP's no_sync window.

A loss averaged over a varying count (llama-1b's response tokens) is weighted by the count
summed over the ranks (one all-reduce of a scalar per step), so k ranks compute the gradient
of the same global mean the 1-rank run does (`--batch-mode global`: same parameters).
"""

from __future__ import annotations

import gc
import os
from typing import Any

import torch
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler

from ..data import LoaderConfig, make_loader
from ..harness.blocks import repeated_blocks
from ..harness.finetune import trainable_parameters
from ..harness.measure import measure
from ..harness.run import RunConfig, build_trainer
from ..records.atomic import atomic_write
from ..workloads import get_workload
from .ddp import _combine, _per_rank_batch, _workers, default_world_sizes, params_file
from .topology import detect_topology, effective_nccl_env
from .worker import FaultPoint, RankContext, init_ranks

__all__ = ["run_ranks", "shard_model", "sharded_state_bytes", "params_difference"]


def shard_model(model: torch.nn.Module, group: Any, device: torch.device) -> int:
    """fully_shard each repeated block, then the root; returns the number of block units."""
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.fsdp import fully_shard

    mesh = DeviceMesh.from_group(group or dist.group.WORLD, device_type=device.type)
    blocks = repeated_blocks(model)
    for block in blocks:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return len(blocks)


def _local_bytes(t: torch.Tensor) -> int:
    local = t.to_local() if hasattr(t, "to_local") else t  # a DTensor's shard on this rank
    return local.numel() * local.element_size()


def sharded_state_bytes(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, int]:
    """This rank's bytes of weights, gradients and optimizer state (its shards only)."""
    params = list(model.parameters())
    opt = sum(_local_bytes(v) for state in optimizer.state.values() for v in state.values() if torch.is_tensor(v))
    return {"param_bytes": sum(_local_bytes(p) for p in params),
            "grad_bytes": sum(_local_bytes(p.grad) for p in params if p.grad is not None),
            "optimizer_bytes": opt}


def _items_reducer(group: Any):
    def reduce(total: torch.Tensor) -> tuple[torch.Tensor, int]:
        total = total.clone()
        dist.all_reduce(total, group=group)
        return total, dist.get_world_size(group)

    return reduce


def _train(args: Any, ctx: RankContext, k: int, group: Any, fault: FaultPoint) -> dict[str, Any]:
    workload = get_workload(args.workload)
    b = _per_rank_batch(args, k, workload.default_batch_size(args.size))
    per_step = b * args.grad_accum
    n = per_step * k * (args.warmup + args.steps)
    dataset = workload.dataset(args.size, n, args.seed)
    sampler = DistributedSampler(dataset, num_replicas=k, rank=ctx.rank, shuffle=True, seed=args.seed, drop_last=True)
    cuda = ctx.device.type == "cuda"
    workers = _workers(ctx) if args.num_workers is None else args.num_workers
    loader = make_loader(dataset, LoaderConfig(batch_size=b, num_workers=workers, pin_memory=cuda), sampler)
    cfg = RunConfig(workload=args.workload, size=args.size, precision=args.precision, batch_size=b,
                    steps=args.steps, warmup=args.warmup, grad_accum=args.grad_accum, seed=args.seed,
                    device=str(ctx.device), finetune=args.finetune,
                    activation_checkpointing=args.activation_checkpointing)
    trainer = build_trainer(cfg, loader)
    trainer.batches = fault.wrap(trainer.batches)
    units = shard_model(trainer.model, group, ctx.device)
    # fully_shard replaced the parameters with DTensors: the optimizer must hold those
    trainer.optimizer = workload.optimizer(trainable_parameters(trainer.model), args.size)
    if workload.loss_items is not None:
        trainer.reduce_items = _items_reducer(group)
    with trainer.precision.context(ctx.device):
        synced = measure(trainer, warmup=args.warmup, steps=args.steps, samples_per_step=per_step)
        state = sharded_state_bytes(trainer.model, trainer.optimizer)
        if args.save_params:
            full = {name: p.full_tensor().detach().cpu() for name, p in trainer.model.named_parameters()}
            if ctx.rank == 0:
                atomic_write(params_file(args.out, k), lambda f: torch.save(full, f))
        local = None
        if args.comm_window:
            trainer.model.set_requires_gradient_sync(False)  # no reduce-scatter; all-gathers stay
            local = measure(trainer, warmup=1, steps=args.steps, samples_per_step=per_step)
            trainer.model.set_requires_gradient_sync(True)
    out = {
        "per_rank_batch": b,
        "wall_s": synced.wall_s,
        "samples": synced.samples,
        "step_times_s": synced.step_times_s,
        "input_wait_s": synced.input_wait_s,
        "losses": synced.losses,
        "peak_mem_bytes": synced.peak_mem_bytes,
        "peak_mem_kind": synced.peak_mem_kind,
        "local_step_times_s": local.step_times_s if local is not None else None,
        "state_bytes": sum(state.values()),
        "fsdp_units": units + 1,
        **state,
    }
    del trainer, loader
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return out


def params_difference(one_path: str, k_path: str) -> dict[str, float]:
    """How far the k-rank final parameters are from the 1-rank ones: the largest element
    difference, the L2 distance relative to the parameters' norm, and the share of elements
    within 1e-5. AdamW divides by sqrt(v), so summation-order noise on a near-zero gradient
    can move a single element by more than the rest: all three are recorded."""
    one = torch.load(one_path, weights_only=True)
    other = torch.load(k_path, weights_only=True)
    diffs = [(other[n].double() - one[n].double()).abs() for n in one]
    norm = sum(t.double().pow(2).sum() for t in one.values()).sqrt().item()
    total = sum(d.numel() for d in diffs)
    return {"max_abs": max(d.max().item() for d in diffs),
            "rel_l2": sum(d.pow(2).sum() for d in diffs).sqrt().item() / norm if norm else float("inf"),
            "within_1e-5": sum((d <= 1e-5).sum().item() for d in diffs) / total}


def run_ranks(args: Any) -> int:
    """This rank's part of the benchmark; `args` as parsed by `trainbench.cli.rank fsdp`."""
    get_workload(args.workload)
    ctx = init_ranks(args.backend, args.out, args.timeout)
    sizes = default_world_sizes(ctx.world_size) if not args.world_sizes else \
        sorted({int(s) for s in args.world_sizes.split(",")})
    if sizes[0] < 1 or sizes[-1] > ctx.world_size:
        raise ValueError(f"--world-sizes {sizes}: each must be in 1..{ctx.world_size} (the launched ranks)")
    fault = FaultPoint(ctx.rank)
    combined = []
    for k in sizes:
        group = None if k == ctx.world_size else dist.new_group(list(range(k)), backend=ctx.backend)
        run = _train(args, ctx, k, group, fault) if ctx.rank < k else None
        runs = [r for r in ctx.gather(run) if r is not None]
        if ctx.rank == 0:
            row = _combine(k, runs, args)
            row["state_bytes_per_rank"] = max(r["state_bytes"] for r in runs)  # the largest shard
            row["fsdp_units"] = runs[0]["fsdp_units"]
            combined.append(row)
        if group is not None:
            dist.destroy_process_group(group)
    if ctx.rank == 0 and args.save_params and 1 in sizes:
        for row in combined:
            row["params_vs_1rank"] = params_difference(params_file(args.out, 1), params_file(args.out, row["world_size"]))
    ctx.write_rank({"sizes": sizes})
    if ctx.rank == 0:
        result = {
            "benchmark": "fsdp",
            "workload": args.workload,
            "size": args.size,
            "precision": args.precision,
            "finetune": args.finetune,
            "activation_checkpointing": args.activation_checkpointing,
            "batch_mode": args.batch_mode,
            "bucket_mb": None,
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
