"""Checkpoint save and resume in a fresh process, the way a preempted run comes back.

The checkpoint holds everything the next step depends on: model `state_dict` (parameters and
persistent buffers), optimizer and GradScaler state, the data loader's position
(StatefulDataLoader), the RNG states (dropout masks) and the step count. It is written
atomically and read back with `torch.load(weights_only=True)` only.

`ResumeSpec` describes the run so that the parent and the fresh process (`python -m
plugin.preflight.resume_child SPEC.json`) build exactly the same trainer and loader.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from ..records.atomic import atomic_write
from ..data import LoaderConfig, make_loader
from ..harness.run import RunConfig, build_trainer, resolve_device
from ..harness.trainer import Trainer
from ..workloads import get_workload

__all__ = ["ResumeSpec", "build", "save_checkpoint", "load_checkpoint", "unsaved_buffers"]


@dataclass
class ResumeSpec:
    workload: str
    size: str
    precision: str
    batch_size: int
    device: str
    seed: int
    num_workers: int
    samples: int  # data set size: the steps before and after the checkpoint, one epoch
    checkpoint: str  # path of the checkpoint file
    steps: int  # optimizer steps to run after resuming
    plugins: list[str] = field(default_factory=list)  # modules / .py files that register the workload
    # intra-op threads of the parent: CPU kernels split reductions by thread count, so a bitwise
    # comparison needs the same number on both sides
    threads: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "ResumeSpec":
        return cls(**json.loads(text))


def build(spec: ResumeSpec) -> tuple[Trainer, Any]:
    """The seeded trainer and its (stateful) loader, identical in every process."""
    wl = get_workload(spec.workload)
    device = resolve_device(spec.device)
    loader = make_loader(
        wl.dataset(spec.size, spec.samples, spec.seed),
        LoaderConfig(batch_size=spec.batch_size, num_workers=spec.num_workers,
                     pin_memory=device.type == "cuda", seed=spec.seed),
    )
    cfg = RunConfig(workload=spec.workload, size=spec.size, precision=spec.precision, batch_size=spec.batch_size,
                    device=spec.device, seed=spec.seed, num_workers=spec.num_workers, dataset_samples=spec.samples)
    return build_trainer(cfg, loader), loader


def _rng_state(device: torch.device) -> dict[str, Any]:
    state = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def save_checkpoint(path: str | Path, trainer: Trainer, loader: Any) -> int:
    """Write the checkpoint atomically; returns its size in bytes."""
    state = {
        "model": trainer.model.state_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "scaler": trainer.scaler.state_dict() if trainer.scaler is not None else None,
        "loader": loader.state_dict(),
        "rng": _rng_state(trainer.device),
        "steps_done": trainer.steps_done,
    }
    path = Path(path)
    atomic_write(path, lambda f: torch.save(state, f))
    return path.stat().st_size


def load_checkpoint(path: str | Path, trainer: Trainer, loader: Any) -> dict[str, Any]:
    """Restore `trainer` and `loader` (built by `build`) from `path`; returns the raw state."""
    state = torch.load(path, map_location=trainer.device, weights_only=True)
    trainer.model.load_state_dict(state["model"])
    trainer.optimizer.load_state_dict(state["optimizer"])
    if trainer.scaler is not None and state["scaler"] is not None:
        trainer.scaler.load_state_dict(state["scaler"])
    loader.load_state_dict(state["loader"])
    torch.set_rng_state(state["rng"]["cpu"].cpu())
    if "cuda" in state["rng"] and trainer.device.type == "cuda":
        torch.cuda.set_rng_state(state["rng"]["cuda"].cpu(), trainer.device)
    trainer.steps_done = int(state["steps_done"])
    return state


def unsaved_buffers(model: torch.nn.Module) -> list[str]:
    """Buffers registered with persistent=False: absent from state_dict, so from checkpoints."""
    saved = set(model.state_dict())
    return [name for name, _ in model.named_buffers() if name not in saved]
