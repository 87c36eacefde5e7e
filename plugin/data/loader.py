"""Batches for the harness: torchdata's `StatefulDataLoader` over a map-style data set, so a
run can be checkpointed and resumed mid-epoch with `state_dict()` / `load_state_dict()`."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import torch
from torch.utils.data import Dataset, Sampler
from torchdata.stateful_dataloader import StatefulDataLoader

__all__ = ["LoaderConfig", "make_loader"]


@dataclass(frozen=True)
class LoaderConfig:
    batch_size: int
    num_workers: int = 0  # decode/augment processes; 0 = in the training process
    prefetch_factor: int | None = None  # batches in flight per worker (torch default 2)
    pin_memory: bool = False  # page-locked host buffers: async host-to-device copies on CUDA
    persistent_workers: bool = False  # keep workers across epochs (no re-spawn cost)
    shuffle: bool = True
    seed: int = 0  # shuffling order; same seed, same order
    drop_last: bool = True  # every step sees a full batch: constant samples per step


def make_loader(dataset: Dataset, cfg: LoaderConfig, sampler: Sampler | None = None,
                collate_fn: Callable | None = None) -> StatefulDataLoader:
    """`sampler` replaces cfg.shuffle/seed: a DistributedSampler (this rank's share), or
    ShardShuffle for shard data sets (its (epoch, index) items make resumed augmentation exact).
    `collate_fn`: None = torch's default."""
    generator = torch.Generator()
    generator.manual_seed(cfg.seed)
    workers = cfg.num_workers > 0
    with warnings.catch_warnings():
        # torchdata 0.11 calls torch.set_vital, deprecated in torch 2.x, on every construction:
        # silenced here, where it happens, so no command or session repeats it
        warnings.filterwarnings("ignore", "'set_vital' is deprecated", UserWarning)
        return _stateful_loader(dataset, cfg, sampler, collate_fn, generator, workers)


def _stateful_loader(dataset, cfg, sampler, collate_fn, generator, workers) -> StatefulDataLoader:
    return StatefulDataLoader(
        dataset,
        batch_size=cfg.batch_size,
        shuffle=cfg.shuffle if sampler is None else None,
        sampler=sampler,
        collate_fn=collate_fn,
        generator=generator,
        num_workers=cfg.num_workers,
        prefetch_factor=cfg.prefetch_factor if workers else None,
        pin_memory=cfg.pin_memory,
        persistent_workers=cfg.persistent_workers and workers,
        drop_last=cfg.drop_last,
    )
