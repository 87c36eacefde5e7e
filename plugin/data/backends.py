"""Storage backends, chosen by name with --storage: where the shards live and how reads reach
them. All go through fsspec.

    synthetic               samples generated in the loader worker: no storage, no decode
    memory                  shards in fsspec's in-memory filesystem: decode cost, no I/O
    local                   a directory (--data-dir)
    gp3, st1, cloud-ssd,    the local directory held to a cloud disk's published IOPS and
    essd-pl0 ... essd-pl3   MB/s (plugin/data/disks.py)
    throttle:<MB/s>,<IOPS>  the local directory held to custom limits (MB = 10^6 bytes)
    s3                      an S3 bucket through s3fs (--s3-endpoint, or a local moto server)
    <any>+cache             behind a local whole-file cache (cold and warm epochs apart)

`memory` lives in the process that prepared it; loader workers see it because Linux DataLoader
workers are forked. (Under the spawn/forkserver start methods use `local`.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

import fsspec

from .cache import CacheOpener
from .disks import disk_profiles, get_disk
from .s3 import S3Target, s3_filesystem
from .throttle import DiskLimits, SharedBudget, ThrottledFileSystem
from ..errors import InputError
from ..registry import Registry

__all__ = ["StorageSpec", "parse_storage", "parse_storage_list", "storage_names", "Opener",
           "MemoryOpener", "LocalOpener", "ThrottleOpener", "S3Opener", "CacheOpener", "BASE_KINDS"]

MB = 10**6
CACHE_SUFFIX = "+cache"

# backend kinds and what they need; disk profiles are kinds too (a throttled local directory)
BASE_KINDS: Registry[str] = Registry("storage backend", flag="--storage")
for _name, _what in (
    ("synthetic", "generated in the loader, no storage"),
    ("memory", "fsspec memory filesystem"),
    ("local", "a local directory (--data-dir)"),
    ("throttle", "the local directory at throttle:<MB/s>,<IOPS>"),
    ("s3", "S3 via s3fs (--s3-endpoint; default: a local moto server)"),
):
    BASE_KINDS.register(_name, _what)


@dataclass(frozen=True)
class StorageSpec:
    """A parsed --storage value."""

    text: str  # as the user wrote it, normalized: the record's `storage` label
    kind: str  # synthetic, memory, local, throttle, s3, or a disk profile name
    limits: DiskLimits | None = None  # throttle and disk profiles
    cached: bool = False  # behind a local whole-file cache

    def __str__(self) -> str:
        return self.text

    @property
    def throttled(self) -> bool:
        return self.limits is not None

    @property
    def local_dir(self) -> bool:
        """Reads a local directory (local, throttle, disk profiles)."""
        return self.kind in ("local", "throttle") or self.kind in disk_profiles()


def storage_names() -> list[str]:
    """Every plain name --storage accepts (throttle:... and +cache are forms of these)."""
    return [n for n in BASE_KINDS.names() if n != "throttle"] + disk_profiles().names()


def _known() -> str:
    return (f"{', '.join(storage_names())}, throttle:<MB/s>,<IOPS>; any but synthetic may end in "
            f"{CACHE_SUFFIX}")


def parse_storage(value: str) -> StorageSpec:
    text = value.strip().lower()
    base, cached = (text[: -len(CACHE_SUFFIX)], True) if text.endswith(CACHE_SUFFIX) else (text, False)
    if base.startswith("throttle"):
        m = re.fullmatch(r"throttle:([0-9]*\.?[0-9]+),([0-9]*\.?[0-9]+)", base)
        if not m or float(m.group(1)) <= 0 or float(m.group(2)) <= 0:
            raise InputError(f"--storage={value}: write throttle:<MB/s>,<IOPS> with positive numbers, "
                             f"e.g. throttle:20,500")
        limits = DiskLimits(float(m.group(1)) * MB, float(m.group(2)))
        return StorageSpec(text, "throttle", limits, cached)
    if base in disk_profiles():
        return StorageSpec(text, base, get_disk(base).limits, cached)
    if base not in BASE_KINDS or base == "throttle":
        raise InputError(f"unknown storage backend --storage={value}; known: {_known()}")
    if base == "synthetic" and cached:
        raise InputError(f"--storage={value}: synthetic data is generated, not stored; nothing to cache")
    return StorageSpec(text, base, None, cached)


def parse_storage_list(value: str) -> list[StorageSpec]:
    """A comma list; the comma inside throttle:<MB/s>,<IOPS> is part of its item."""
    items: list[str] = []
    for token in (t.strip() for t in value.split(",")):
        if not token:
            continue
        if items and items[-1].lower().startswith("throttle:") and items[-1].count(",") == 0 \
                and re.fullmatch(r"[0-9]*\.?[0-9]+(\+cache)?", token.lower()):
            items[-1] += "," + token
        else:
            items.append(token)
    if not items:
        raise InputError("--storage needs at least one backend; known: " + _known())
    specs = [parse_storage(i) for i in items]
    return list({s.text: s for s in specs}.values())  # de-duplicated, order kept


# ---- openers: picklable () -> filesystem, called once per reading process -------------------

Opener = Callable[[], Any]


@dataclass
class MemoryOpener:
    def __call__(self):
        return fsspec.filesystem("memory")


@dataclass
class LocalOpener:
    def __call__(self):
        return fsspec.filesystem("file")


@dataclass
class ThrottleOpener:
    budget: SharedBudget  # shared by every process reading through this backend instance

    def __call__(self):
        return ThrottledFileSystem(fsspec.filesystem("file"), self.budget)


@dataclass
class S3Opener:
    target: S3Target

    def __call__(self):
        return s3_filesystem(self.target)

