"""One benchmark run from a plain config: build workload, model, optimizer, loader; measure."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from ..data import LoaderConfig, storage_context, storage_loader
from ..errors import InputError
from .epochs import Epochs
from .measure import Measurement, measure
from .precision import get_precision
from .trainer import Trainer
from ..metrics import training_metrics
from ..workloads import get_workload

__all__ = ["RunConfig", "RunOutput", "auto_workers", "resolve_device", "build_trainer", "loader_config", "run"]


def resolve_device(name: str = "auto") -> torch.device:
    if name == "auto":
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


@dataclass
class RunConfig:
    workload: str
    size: str = "tiny"
    precision: str = "fp32"
    batch_size: int | None = None  # micro-batch; None = the workload's default for the size
    steps: int = 10  # measured optimizer steps
    warmup: int = 3  # unmeasured steps first: allocator, cudnn autotune, worker start-up
    min_warmup_s: float = 0.0  # warm-up also lasts at least this long: clocks, caches, autotuners settle
    min_window_s: float = 0.0  # the measured window also lasts at least this long (0.1 s says little)
    grad_accum: int = 1  # micro-batches per optimizer step
    seed: int = 0
    device: str = "auto"
    storage: str = "synthetic"  # where samples come from: a --storage backend (plugin/data/backends.py)
    num_workers: int | None = None  # None = --num-workers (first value) or auto: 0 on CPU, min(4, cores) on CUDA
    prefetch_factor: int | None = None  # batches in flight per worker; None = --prefetch-factor or torch's 2
    pin_memory: bool | None = None  # None = --pin-memory, or on for CUDA
    persistent_workers: bool | None = None  # None = --persistent-workers
    weights: str | None = None  # local Hugging Face-format checkpoint to start from
    dataset_samples: int | None = None  # None = enough for warm-up + measured steps
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunOutput:
    config: RunConfig
    measurement: Measurement
    metrics: dict[str, Any]
    device: torch.device


def auto_workers(device: torch.device) -> int:
    if device.type != "cuda":
        return 0  # on a small CPU box workers steal cores from the compute they feed
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cores - 1))


def loader_config(cfg: RunConfig, batch: int, device: torch.device) -> LoaderConfig:
    """Loader knobs: the RunConfig's, else the session's (--num-workers ...), else automatic."""
    session = storage_context().settings
    workers = cfg.num_workers
    if workers is None:
        workers = session.num_workers[0] if session.num_workers else auto_workers(device)
    pin = cfg.pin_memory if cfg.pin_memory is not None else session.pin_memory
    persistent = cfg.persistent_workers if cfg.persistent_workers is not None else session.persistent_workers
    return LoaderConfig(
        batch_size=batch,
        num_workers=workers,
        prefetch_factor=cfg.prefetch_factor or session.prefetch_factor,
        pin_memory=device.type == "cuda" if pin is None else pin,
        persistent_workers=persistent,
        seed=cfg.seed,
    )


def build_trainer(cfg: RunConfig, loader: Any | None = None) -> Trainer:
    """Seeded model + optimizer + loader + Trainer on the resolved device."""
    workload = get_workload(cfg.workload)
    device = resolve_device(cfg.device)
    precision = get_precision(cfg.precision)
    precision.check(device)
    batch = cfg.batch_size or workload.default_batch_size(cfg.size)
    torch.manual_seed(cfg.seed)
    model = workload.model(cfg.size)
    if cfg.weights:
        if workload.load_weights is None:
            raise InputError(f"--weights: workload {workload.name!r} cannot load pretrained weights")
        workload.load_weights(model, cfg.weights)
    model.to(device)
    optimizer = workload.optimizer(model.parameters(), cfg.size)
    if loader is None:
        n = cfg.dataset_samples or batch * cfg.grad_accum * (cfg.steps + cfg.warmup)
        loader = storage_loader(cfg.storage, cfg.workload, cfg.size, n, cfg.seed, loader_config(cfg, batch, device),
                                cold_cache=cfg.extra.get("cold_cache", True))  # +cache: empty cache first
    return Trainer(workload, model, optimizer, Epochs(loader), device, precision, cfg.grad_accum)


def run(cfg: RunConfig, peak_flops_per_s: float | None = None, loader: Any | None = None) -> RunOutput:
    trainer = build_trainer(cfg, loader)
    workload = trainer.workload
    batch = cfg.batch_size or workload.default_batch_size(cfg.size)
    with trainer.precision.context(trainer.device):
        m = measure(trainer, warmup=cfg.warmup, steps=cfg.steps, samples_per_step=batch * cfg.grad_accum,
                    min_warmup_s=cfg.min_warmup_s, min_window_s=cfg.min_window_s)
    metrics = training_metrics(
        m,
        flops_per_sample=workload.flops_per_sample(cfg.size),
        peak_flops_per_s=peak_flops_per_s,
        tokens_per_sample=workload.tokens_per_sample(cfg.size) if workload.tokens_per_sample else None,
    )
    return RunOutput(cfg, m, metrics, trainer.device)
