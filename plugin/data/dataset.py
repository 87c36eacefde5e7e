"""A map-style data set over prepared shards: one ranged read per sample through fsspec, then
decode (+ random resized crop and flip for images) in whichever process asks -- the loader
workers, so the CPU cost of the input pipeline lands where it does in real training.

A sample comes back as the same dict the workload's synthetic data set yields (images uint8
(3, H, W) at the model's size), so `Workload.loss` needs no change. Indices are (epoch, index)
pairs from `ShardShuffle`; a plain int means epoch 0.
"""

from __future__ import annotations

import bisect
import io
import multiprocessing
import os
import tarfile
from typing import Any, Callable

import torch
from torch.utils.data import Dataset
from torch.utils.data._utils.collate import default_collate

from .augment import decode_augment, sample_rng
from .codec import decode_array, decode_cls
from .shards import Manifest
from ..errors import TrainbenchError

__all__ = ["ShardDataset", "CorruptShard", "SkipCounter", "collate_skipping"]


class CorruptShard(TrainbenchError):
    """A shard is truncated or a member does not decode; the message names shard and sample."""


class SkipCounter:
    """Samples skipped as corrupt, counted across loader worker processes (shared memory)."""

    def __init__(self):
        self._value = multiprocessing.get_context().Value("q", 0)

    def add(self, n: int = 1) -> None:
        with self._value.get_lock():
            self._value.value += n

    @property
    def value(self) -> int:
        return int(self._value.value)


def collate_skipping(batch: list) -> Any:
    """default_collate without the samples a skipping data set returned as None."""
    kept = [b for b in batch if b is not None]
    if not kept:
        raise CorruptShard(f"every sample of a batch of {len(batch)} was corrupt and skipped")
    return default_collate(kept)


class ShardDataset(Dataset):
    def __init__(self, opener: Callable[[], Any], root: str, manifest: Manifest, *, seed: int = 0,
                 augment: bool = True, skip_corrupt: SkipCounter | None = None, label: str = ""):
        self.opener = opener  # picklable () -> fsspec filesystem; called once per process
        self.root = root
        self.manifest = manifest
        self.seed = seed  # augmentation seed: crops depend on (seed, epoch, index) only
        self.augment = augment  # False: centre-resize instead of random crop + flip
        self.skip_corrupt = skip_corrupt  # None: raise on corrupt samples; else count and skip
        self.label = label  # backend name for messages
        self._fs = None
        self._pid = None

    def __len__(self) -> int:
        return self.manifest.count

    @property
    def fs(self):
        # fsspec async filesystems (s3fs) hold an event loop and sessions that must not cross a
        # fork: every process opens its own
        if self._fs is None or self._pid != os.getpid():
            self._fs, self._pid = self.opener(), os.getpid()
        return self._fs

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_fs": None, "_pid": None}  # workers open their own

    def locate(self, index: int) -> tuple[str, int, int]:
        """(shard name, start, end) of sample `index`."""
        m = self.manifest
        s = bisect.bisect_right(m.keys_start, index) - 1
        start, end = m.ranges[s][index - m.keys_start[s]]
        return m.shards[s], start, end

    def __getitem__(self, item: int | tuple[int, int]) -> dict[str, torch.Tensor] | None:
        epoch, index = item if isinstance(item, tuple) else (0, item)
        if not 0 <= index < self.manifest.count:
            raise IndexError(index)
        shard, start, end = self.locate(index)
        key = f"{index:09d}"
        # I/O errors (missing file, network, permissions) propagate as they are; only what the
        # bytes themselves say -- short, unparsable, undecodable -- is a corrupt shard
        data = self.fs.cat_file(f"{self.root}/{shard}", start=start, end=end)
        try:
            if len(data) != end - start:
                raise CorruptShard(f"truncated: bytes {start}-{end} wanted, {len(data)} read")
            return self._decode(data, key, epoch, index)
        except (CorruptShard, tarfile.TarError, OSError, ValueError, KeyError, EOFError, SyntaxError) as exc:
            if self.skip_corrupt is not None:
                self.skip_corrupt.add()
                return None
            raise CorruptShard(
                f"corrupt or truncated shard {self.root}/{shard}{f' on {self.label}' if self.label else ''}: "
                f"sample key {key} (index {index}): {exc}. Re-run `trainbench data prepare` for it, "
                f"or pass --skip-corrupt to skip and count such samples"
            ) from None

    def _decode(self, data: bytes, key: str, epoch: int, index: int) -> dict[str, torch.Tensor]:
        members: dict[str, bytes] = {}
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for info in tar:
                f = tar.extractfile(info)
                if f is not None:
                    members[info.name] = f.read()
        out = {}
        for spec in self.manifest.fields:
            name = spec.member(key)
            if name not in members:
                raise CorruptShard(f"member {name} missing (found {sorted(members) or 'none'})")
            raw = members[name]
            if spec.ext == "jpg":
                size = spec.shape[-1]
                rng = sample_rng(self.seed, epoch, index) if self.augment else None
                out[spec.name] = decode_augment(raw, size, rng)
            elif spec.ext == "cls":
                out[spec.name] = decode_cls(raw).to(getattr(torch, spec.dtype))
            else:
                value = decode_array(raw, spec.dtype)
                if tuple(value.shape) != spec.shape:
                    raise CorruptShard(f"member {name} has shape {tuple(value.shape)}, manifest says {spec.shape}")
                out[spec.name] = value
        return out
