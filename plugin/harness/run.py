"""One benchmark run from a plain config: build workload, model, optimizer, loader; measure."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch import nn

from ..catalog import GpuSpec
from ..data import LoaderConfig, StorageSpec, parse_storage, storage_loader
from ..errors import InputError
from .blocks import activation_checkpointing
from .compile import apply_compile, compile_warmup
from .epochs import Epochs
from .finetune import apply_finetune, parameter_counts, trainable_parameters
from .measure import Measurement, measure
from .precision import get_precision
from .trainer import Trainer
from .tuning import tune
from ..metrics import training_metrics
from ..workloads import get_workload

__all__ = ["RunConfig", "RunOutput", "auto_workers", "resolve_device", "build_trainer", "loader_config", "run"]


def resolve_device(name: str = "auto") -> torch.device:
    if name == "auto":
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


SYNTHETIC = parse_storage("synthetic")  # the workload's generated data set: no storage, no decode


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
    storage: StorageSpec = SYNTHETIC  # where samples come from: a parsed --storage backend
    num_workers: int | None = None  # loader worker processes; None = auto: 0 on CPU, min(4, cores) on CUDA
    prefetch_factor: int | None = None  # batches in flight per worker; None = torch's 2
    pin_memory: bool | None = None  # page-locked host batches; None = on for CUDA
    persistent_workers: bool = False
    weights: str | None = None  # local Hugging Face-format checkpoint to start from
    dataset_samples: int | None = None  # None = enough for warm-up + measured steps
    finetune: str = "full"  # full | lora (workloads with lora_targets): harness/finetune.py
    compile: str = "none"  # none | default | max-autotune | regional: harness/compile.py
    activation_checkpointing: bool = False  # recompute each repeated block in backward
    tuning: str = "tuned"  # tuned | plain: fused optimizer, channels_last + cudnn.benchmark (harness/tuning.py)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunOutput:
    config: RunConfig
    measurement: Measurement
    metrics: dict[str, Any]
    device: torch.device
    modes: dict[str, Any] = field(default_factory=dict)  # fine-tuning / compile / checkpointing facts


MAX_AUTO_WORKERS = 8  # past this, more decode processes rarely help one GPU and cost host memory


def auto_workers(device: torch.device, cores: int | None = None, gpus: int | None = None) -> int:
    """Loader workers for one training process: 0 on a CPU (workers steal the cores the compute
    runs on); on a GPU box this process's share of the cores -- cores / GPUs (or / the ranks on
    this node) -- less one for the process itself, at least 1, at most MAX_AUTO_WORKERS."""
    if device.type != "cuda":
        return 0
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if gpus is None:
        gpus = int(os.environ.get("LOCAL_WORLD_SIZE", 0)) or max(1, torch.cuda.device_count())
    return max(1, min(MAX_AUTO_WORKERS, cores // gpus - 1))


def loader_config(cfg: RunConfig, batch: int, device: torch.device) -> LoaderConfig:
    """The RunConfig's loader knobs, with the automatic choice where one is None."""
    return LoaderConfig(
        batch_size=batch,
        num_workers=auto_workers(device) if cfg.num_workers is None else cfg.num_workers,
        prefetch_factor=cfg.prefetch_factor,
        pin_memory=device.type == "cuda" if cfg.pin_memory is None else cfg.pin_memory,
        persistent_workers=cfg.persistent_workers,
        seed=cfg.seed,
    )


def build_trainer(cfg: RunConfig, loader: Any | None = None, *,
                  scheduler: Callable[[torch.optim.Optimizer], Any] | None = None,
                  wrap: Callable[[nn.Module], nn.Module] | None = None) -> Trainer:
    """Seeded model + optimizer + loader + Trainer on the resolved device.

    `scheduler(optimizer)` builds the LR scheduler stepped after every optimizer step; `wrap(model)`
    wraps the model once it is on its device (DistributedDataParallel, FSDP), before training.
    """
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
    model, modes = _apply_modes(cfg, workload, model)
    optimizer = workload.optimizer(trainable_parameters(model), cfg.size)
    model, optimizer, tuned = tune(model, optimizer, device, cfg.tuning)
    modes.update(tuned)
    if loader is None:
        n = cfg.dataset_samples or batch * cfg.grad_accum * (cfg.steps + cfg.warmup)
        loader = storage_loader(cfg.storage, cfg.workload, cfg.size, n, cfg.seed, loader_config(cfg, batch, device),
                                cold_cache=cfg.extra.get("cold_cache", True))  # +cache: empty cache first
    if wrap is not None:
        model = wrap(model)
    trainer = Trainer(workload, model, optimizer, Epochs(loader), device, precision, cfg.grad_accum,
                      scheduler=scheduler(optimizer) if scheduler else None)
    trainer.modes = modes  # what the record states about fine-tuning, compile, checkpointing
    return trainer


def _apply_modes(cfg: RunConfig, workload, model):
    """Activation checkpointing, then LoRA, then torch.compile (compiling last sees both)."""
    wrapped = activation_checkpointing(model) if cfg.activation_checkpointing else 0
    model = apply_finetune(model, cfg.finetune, workload, cfg.extra.get("lora"))
    model, info = apply_compile(model, cfg.compile)
    modes = {"finetune": cfg.finetune, "activation_checkpointing_blocks": wrapped, **parameter_counts(model),
             "compile_info": info}
    if cfg.finetune == "lora":
        from .finetune import LoraSettings

        modes["lora"] = (cfg.extra.get("lora") or LoraSettings()).describe(workload.lora_targets)
    return model, modes


def run(cfg: RunConfig, gpu: GpuSpec | None = None, loader: Any | None = None,
        achievable_peak_flops_per_s: float | None = None) -> RunOutput:
    """Measure one training benchmark. `gpu`: the catalog entry of the device, whose dense peak
    at this precision is the MFU denominator (looked up here, and only here);
    `achievable_peak_flops_per_s`: what this card measured it can do (the `mfu_achievable` one)."""
    trainer = build_trainer(cfg, loader)
    workload = trainer.workload
    batch = cfg.batch_size or workload.default_batch_size(cfg.size)
    with trainer.precision.context(trainer.device):
        compiled = compile_warmup(trainer, trainer.modes["compile_info"])  # before, never inside, the window
        m = measure(trainer, warmup=cfg.warmup, steps=cfg.steps, samples_per_step=batch * cfg.grad_accum,
                    min_warmup_s=cfg.min_warmup_s, min_window_s=cfg.min_window_s)
    metrics = training_metrics(
        m,
        flops_per_sample=workload.flops_per_sample(cfg.size),
        peak_flops_per_s=gpu.peak_flops(trainer.precision.catalog_key) if gpu else None,
        tokens_per_sample=workload.tokens_per_sample(cfg.size) if workload.tokens_per_sample else None,
        achievable_peak_flops_per_s=achievable_peak_flops_per_s,
    )
    if cfg.compile != "none":
        metrics["compile_s"] = compiled.compile_s
    modes = {k: v for k, v in trainer.modes.items() if k != "compile_info"}
    return RunOutput(cfg, m, metrics, trainer.device, {**modes, **compiled.as_config()})
