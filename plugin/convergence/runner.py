"""Train until the held-out loss is within a stated margin of the task's floor (kind `convergence`).

Clock rules (as MLPerf Training): the clock starts, device synchronized, just before the first
optimizer step, after the model, optimizer, task and held-out set are built; it includes
every training step, its input fetch and every evaluation, and stops when the evaluation that
first reaches the target returns its loss. The target is `floor * (1 + margin)`; evaluation
runs every `eval_every` steps on a fixed held-out set drawn with a seed no training run uses.
A run that does not reach the target in `max_steps` (or whose loss turns inf/NaN) is a
result, "not reached", with its loss curve -- never an error.

The training step is the harness's (`Trainer.step`, built by `build_trainer`); only the data
source is swapped for the task's, through the `loader` argument.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils.data import DataLoader

from ..harness.run import RunConfig, auto_workers, build_trainer, resolve_device
from ..harness.trainer import to_device
from ..workloads import get_workload
from .tasks import HELD_OUT_SEED, Task, task_for

__all__ = ["ConvergenceConfig", "ConvergenceRun", "train_to_target"]


@dataclass(frozen=True)
class ConvergenceConfig:
    margin: float = 0.10  # target = floor x (1 + margin): what a tiny model reaches in seconds on a CPU
    max_steps: int = 1000  # budget; past it the run is "not reached in max_steps steps"
    eval_every: int = 20  # optimizer steps between held-out evaluations (on the clock)
    eval_samples: int | None = None  # held-out set size; None = the task's; same set for every seed
    lr_scale: float = 1.0  # x the workload's reference learning rate (100 = a recipe that cannot train)
    loss_scaling: bool | None = None  # None: the precision's own (fp16 scales); False turns GradScaler off
    task_seed: int = 0  # fixes the task (transition table, prototypes); the run seed does not change it
    label_noise: float = 0.1  # eps of the classifier tasks


@dataclass
class ConvergenceRun:
    seed: int
    reached: bool
    steps: int  # optimizer steps taken (to the target, or the budget)
    samples: int  # samples consumed in those steps
    time_s: float  # clock time, evaluations included
    eval_time_s: float  # of which evaluation
    reason: str  # "" when reached, else "not reached in N steps" / "diverged (...)"
    curve: list[dict[str, float]] = field(default_factory=list)  # {step, time_s, train_loss, eval_loss}


def _held_out(task: Task, n: int, batch: int, device: torch.device) -> list[dict]:
    loader = DataLoader(task.dataset(n, HELD_OUT_SEED), batch_size=batch)
    return [to_device(b, device) for b in loader]


def _evaluate(trainer, held_out: list[dict]) -> float:
    model, total, count = trainer.model, 0.0, 0
    model.eval()
    with torch.no_grad(), trainer.precision.autocast(trainer.device):
        for b in held_out:
            n = next(iter(b.values())).shape[0]
            total += float(trainer.workload.loss(model, b)) * n  # float(): the device syncs here
            count += n
    model.train()
    return total / count


def train_to_target(cfg: RunConfig, conv: ConvergenceConfig, task: Task | None = None) -> ConvergenceRun:
    """One seeded run (seed = cfg.seed: model init and training samples) to the target."""
    workload = get_workload(cfg.workload)
    task = task or task_for(workload, cfg.size, conv.task_seed, conv.label_noise)
    device = resolve_device(cfg.device)
    batch = cfg.batch_size or workload.default_batch_size(cfg.size)
    per_step = batch * cfg.grad_accum
    data = task.dataset(per_step * conv.max_steps, cfg.seed)  # a stream: no sample is seen twice
    loader = DataLoader(data, batch_size=batch, num_workers=auto_workers(device), pin_memory=device.type == "cuda")
    trainer = build_trainer(cfg, loader)
    for group in trainer.optimizer.param_groups:
        group["lr"] *= conv.lr_scale
    if conv.loss_scaling is False:
        trainer.scaler = None
    held_out = _held_out(task, conv.eval_samples or task.eval_samples, batch * task.eval_batch_multiple, device)
    target = task.floor * (1 + conv.margin)
    curve: list[dict[str, float]] = []
    eval_s, reason, step = 0.0, "", 0
    with trainer.precision.context(device):
        trainer.clock.synchronize()
        t0 = time.perf_counter()
        for step in range(1, conv.max_steps + 1):
            loss = trainer.step()
            if step % conv.eval_every and step != conv.max_steps:
                continue
            e0 = time.perf_counter()
            ev = _evaluate(trainer, held_out)
            now = time.perf_counter()
            eval_s += now - e0
            curve.append({"step": step, "time_s": now - t0, "train_loss": float(loss), "eval_loss": ev})
            if not math.isfinite(ev):
                reason = f"not reached: diverged (held-out loss {ev}) at step {step} of {conv.max_steps}"
                break
            if ev <= target:
                break
        else:
            reason = f"not reached in {conv.max_steps} steps"
    elapsed = curve[-1]["time_s"] if curve else 0.0
    return ConvergenceRun(cfg.seed, not reason, step, step * per_step, elapsed, eval_s, reason, curve)
