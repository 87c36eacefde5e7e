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

import os
from typing import Any

import torch
import torch.distributed as dist

from ..harness.blocks import repeated_blocks
from ..harness.finetune import trainable_parameters
from ..harness.measure import measure
from ..records.atomic import atomic_write
from .ddp import params_file, rank_trainer, release, run_output, sweep
from .worker import FaultPoint, RankContext

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
    trainer, b, per_step = rank_trainer(args, ctx, k, fault, finetune=args.finetune,
                                        activation_checkpointing=args.activation_checkpointing)
    workload = trainer.workload
    units = shard_model(trainer.model, group, ctx.device)
    # fully_shard replaced the parameters with DTensors: the optimizer must hold those
    trainer.optimizer = workload.optimizer(trainable_parameters(trainer.model), args.size)
    if workload.loss_items is not None:
        trainer.reduce_items = _items_reducer(group)
    with trainer.precision.context(ctx.device):
        synced = measure(trainer, warmup=args.warmup, steps=args.steps, samples_per_step=per_step)
        state = sharded_state_bytes(trainer.model, trainer.optimizer)
        if args.save_params:  # full_tensor() is collective: every rank of the group gathers
            full = {name: p.full_tensor().detach().cpu() for name, p in trainer.model.named_parameters()}
            if ctx.rank == 0:
                atomic_write(params_file(args.out, k), lambda f: torch.save(full, f))
        local = None
        if args.comm_window:
            trainer.model.set_requires_gradient_sync(False)  # no reduce-scatter; all-gathers stay
            local = measure(trainer, warmup=1, steps=args.steps, samples_per_step=per_step)
            trainer.model.set_requires_gradient_sync(True)
    out = {**run_output(b, synced, local), "state_bytes": sum(state.values()), "fsdp_units": units + 1, **state}
    release(trainer, ctx.device)
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

    def finish(row: dict[str, Any], runs: list[dict[str, Any]]) -> None:
        row["state_bytes_per_rank"] = max(r["state_bytes"] for r in runs)  # the largest shard
        row["fsdp_units"] = runs[0]["fsdp_units"]
        if args.save_params and os.path.exists(params_file(args.out, 1)):  # rank 0 wrote both files
            row["params_vs_1rank"] = params_difference(params_file(args.out, 1), params_file(args.out, row["world_size"]))

    extra = {"finetune": args.finetune, "activation_checkpointing": args.activation_checkpointing, "bucket_mb": None}
    return sweep(args, _train, "fsdp", extra, finish)
