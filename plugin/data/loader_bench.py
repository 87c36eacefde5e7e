"""The loader alone: how fast a backend + worker count delivers batches, with no model.

Batches are pulled as fast as the loader yields them; the first `warmup` batches (worker
start-up, first connections) are not timed. Rates are samples / wall time of the rest of the
epoch; MB/s counts the stored bytes of those samples (shard member bytes, tar headers included).
A +cache backend runs two epochs over the same loader: cold (cache emptied first) and warm.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = ["EpochRate", "time_epoch", "preloaded_batches"]


@dataclass
class EpochRate:
    samples: int  # timed samples
    wall_s: float
    bytes_read: int  # stored bytes of the timed samples
    batch_waits_s: list[float] = field(default_factory=list)  # per timed batch: time in next()

    @property
    def samples_per_s(self) -> float:
        return self.samples / self.wall_s

    @property
    def mb_per_s(self) -> float:
        return self.bytes_read / self.wall_s / 1e6


def time_epoch(loader: Iterable, bytes_per_sample: float, warmup: int = 2) -> EpochRate:
    """One pass over `loader`; the first `warmup` batches untimed."""
    it = iter(loader)
    for _ in range(warmup):
        next(it)
    samples, waits = 0, []
    t0 = last = time.perf_counter()
    for batch in it:
        now = time.perf_counter()
        waits.append(now - last)
        samples += len(next(iter(batch.values())))
        last = time.perf_counter()
    wall = last - t0
    if samples == 0:
        raise ValueError(f"the epoch had no batches after {warmup} warm-up batches: prepare more samples")
    return EpochRate(samples, wall, int(samples * bytes_per_sample), waits)


def preloaded_batches(loader: Iterable, count: int, device: Any) -> list[dict]:
    """The first `count` batches of `loader`, already in device memory: the input pipeline's
    cost removed, for DS-Analyzer's differential stall estimate (Mohan et al., VLDB 2021)."""
    from ..harness.trainer import to_device

    out = []
    for batch in loader:
        out.append(to_device(batch, device))
        if len(out) == count:
            break
    return out
