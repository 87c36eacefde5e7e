"""Shard-aware shuffling that is exact to resume: the order of epoch e is a function of
(seed, e) only, and the sampler's state is (epoch, position).

Order within an epoch (the webdataset / MosaicML-streaming compromise between randomness and
locality): shards in a random order, then samples shuffled within windows of `window` shards.
Consecutive reads stay within a few shards, so a whole-file cache fills shard by shard through
the epoch and object-store reads stay sequential-ish -- as in a real sharded pipeline.

Indices are yielded as (epoch, index) pairs so the data set can seed its augmentation with the
epoch: torchdata's StatefulDataLoader snapshots the sampler iterator's `state_dict()` with
every batch it dispatches and restores it on `load_state_dict()`.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import torch
from torch.utils.data import Sampler

__all__ = ["ShardShuffle"]


def _generator(seed: int, epoch: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed((seed * 1_000_003 + epoch * 7919 + 17) & 0x7FFF_FFFF_FFFF_FFFF)
    return g


class ShardShuffle(Sampler):
    def __init__(self, shard_sizes: Sequence[int], seed: int = 0, shuffle: bool = True, window: int = 4):
        self.shard_sizes = list(shard_sizes)  # samples per shard, shards in index order
        self.seed = seed
        self.shuffle = shuffle
        self.window = window  # shards whose samples are mixed together
        self.epoch = 0  # the epoch the next started iterator will run

    def __len__(self) -> int:
        return sum(self.shard_sizes)

    def order(self, epoch: int) -> list[int]:
        starts = [0]
        for n in self.shard_sizes:
            starts.append(starts[-1] + n)
        if not self.shuffle:
            return list(range(starts[-1]))
        g = _generator(self.seed, epoch)
        shards = torch.randperm(len(self.shard_sizes), generator=g).tolist()
        out: list[int] = []
        for w in range(0, len(shards), self.window):
            idx = torch.cat([torch.arange(starts[s], starts[s + 1]) for s in shards[w : w + self.window]])
            out.extend(idx[torch.randperm(len(idx), generator=g)].tolist())
        return out

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return _EpochIterator(self)

    def state_dict(self) -> dict:
        return {"epoch": self.epoch}

    def load_state_dict(self, state: dict) -> None:
        self.epoch = int(state["epoch"])


class _EpochIterator(Iterator[tuple[int, int]]):
    """Claims its epoch number on the first `next()`: DataLoader iterators call `iter(sampler)`
    more than once per epoch (construction and reset), and an iterator that never yields must
    not use up an epoch."""

    def __init__(self, sampler: ShardShuffle):
        self.sampler = sampler
        self.epoch: int | None = None
        self.position = 0
        self._order: list[int] = []

    def __iter__(self):
        return self

    def _start(self, epoch: int) -> None:
        self.epoch = epoch
        self.sampler.epoch = epoch + 1
        self._order = self.sampler.order(epoch)

    def __next__(self) -> tuple[int, int]:
        if self.epoch is None:
            self._start(self.sampler.epoch)
        if self.position >= len(self._order):
            raise StopIteration
        i = self._order[self.position]
        self.position += 1
        return self.epoch, i

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state: dict) -> None:
        if state["epoch"] is None:
            self.epoch, self.position = None, 0
            return
        self._start(int(state["epoch"]))
        self.position = int(state["position"])
