"""The storage side of one session: settings from the command line, where each backend keeps
its shards, the local S3 server when one is needed, and the shard preparation cache.

One context per process (`current()`); the pytest plugin configures it from its options at
start and closes it at the end (stopping a moto server it started); outside pytest the defaults
apply and `close()` runs at exit.
"""

from __future__ import annotations

import atexit
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import fsspec

from .backends import LocalOpener, MemoryOpener, S3Opener, StorageSpec, ThrottleOpener, parse_storage
from .cache import CacheOpener
from .dataset import ShardDataset, SkipCounter
from .s3 import MotoServer, S3Target, check_reachable, s3_filesystem
from .shards import Manifest, dataset_key, prepare_shards, read_manifest
from .throttle import SharedBudget
from ..errors import InputError

__all__ = ["StorageSettings", "StorageContext", "current", "configure", "close"]


@dataclass
class StorageSettings:
    cache_root: str = ".trainbench-cache"  # prepared shards (local tiers) and +cache caches
    data_dir: str | None = None  # --data-dir: shards of local/throttled tiers; None = <cache_root>/data
    s3_endpoint: str | None = None  # --s3-endpoint; None = start a moto server on loopback
    s3_bucket: str = "trainbench"  # --s3-bucket
    skip_corrupt: bool = False  # --skip-corrupt: count and skip corrupt samples instead of failing


@dataclass
class PreparedData:
    spec: StorageSpec
    dataset: ShardDataset
    manifest: Manifest
    cache_dir: str | None  # +cache: the local cache directory of this data set


class StorageContext:
    def __init__(self, settings: StorageSettings | None = None, say: Callable[[str], None] | None = None):
        self.settings = settings or StorageSettings()
        self.say = say or (lambda line: None)  # how to tell the user (the terminal, in pytest)
        self.notes: list[str] = []
        self.moto: MotoServer | None = None
        self._s3: S3Target | None = None
        self._budgets: dict[str, SharedBudget] = {}
        self._prepared: dict[tuple, Manifest] = {}

    # ---- where things live ---------------------------------------------------------------
    @property
    def data_dir(self) -> Path:
        return Path(self.settings.data_dir or Path(self.settings.cache_root) / "data").absolute()

    def cache_dir(self, spec: StorageSpec, key: str) -> Path:
        slug = spec.text.removesuffix("+cache").replace(":", "_").replace(",", "_")
        return Path(self.settings.cache_root).absolute() / "simplecache" / slug / key

    def s3_target(self) -> S3Target:
        if self._s3 is None:
            s = self.settings
            if s.s3_endpoint:
                target = S3Target(s.s3_endpoint, s.s3_bucket)
                check_reachable(target)
            else:
                self.moto = _start_moto()
                target = self.moto.target(s.s3_bucket)
                check_reachable(target, create_bucket=True)
                self._note(f"trainbench: started a local S3 server (moto) at {self.moto.endpoint} for --storage=s3; "
                           f"it stops at the end of the session (pass --s3-endpoint to use a real one)")
            self._s3 = target
        return self._s3

    def _note(self, line: str) -> None:
        self.notes.append(line)
        self.say(line)

    def _location(self, spec: StorageSpec, key: str) -> tuple[Any, Any, str]:
        """(writer filesystem, reader opener, root path) of the shards for `spec`."""
        if spec.kind == "memory":
            return fsspec.filesystem("memory"), MemoryOpener(), f"/trainbench/{key}"
        if spec.local_dir:
            root = str(self.data_dir / key)
            if spec.throttled:
                # one budget per backend per session: every loader and worker shares the disk
                budget = self._budgets.setdefault(spec.text, SharedBudget(spec.limits))
                return fsspec.filesystem("file"), ThrottleOpener(budget), root
            return fsspec.filesystem("file"), LocalOpener(), root
        if spec.kind == "s3":
            target = self.s3_target()
            return s3_filesystem(target), S3Opener(target), f"{target.bucket}/{key}"
        raise ValueError(f"storage {spec.text!r} holds no shards")

    # ---- data sets -----------------------------------------------------------------------
    def prepare(self, storage: str | StorageSpec, workload: str, size: str, seed: int,
                count: int) -> tuple[Manifest, str]:
        """Shards for (workload, size, seed, count) on the backend, written once and reused."""
        spec = parse_storage(storage) if isinstance(storage, str) else storage
        key = dataset_key(workload, size, seed, count)
        fs, _, root = self._location(spec, key)
        memo = (spec.kind if not spec.local_dir else "local", root)
        manifest = self._prepared.get(memo) or read_manifest(fs, root)
        if manifest is None:
            manifest = prepare_shards(fs, root, workload, size, seed, count)
        self._prepared[memo] = manifest
        return manifest, root

    def open(self, storage: str | StorageSpec, workload: str, size: str, seed: int, count: int, *,
             cold_cache: bool = True, augment: bool = True) -> PreparedData:
        """A ShardDataset over the prepared shards; `cold_cache` empties a +cache cache first."""
        spec = parse_storage(storage) if isinstance(storage, str) else storage
        manifest, root = self.prepare(spec, workload, size, seed, count)
        key = dataset_key(workload, size, seed, count)
        _, opener, _ = self._location(spec, key)
        cache_dir = None
        if spec.cached:
            cache_dir = str(self.cache_dir(spec, key))
            if cold_cache:
                shutil.rmtree(cache_dir, ignore_errors=True)
            opener = CacheOpener(opener, cache_dir)
        skip = SkipCounter() if self.settings.skip_corrupt else None
        ds = ShardDataset(opener, root, manifest, seed=seed, augment=augment, skip_corrupt=skip, label=spec.text)
        return PreparedData(spec, ds, manifest, cache_dir)

    def close(self) -> None:
        if self.moto is not None:
            self.moto.stop()
            self.moto = None
        self._s3 = None


def _start_moto(attempts: int = 3) -> MotoServer:
    """A moto server; retried because the free port we picked can be taken before moto binds it."""
    for attempt in range(attempts):
        try:
            return MotoServer()
        except InputError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


_CURRENT: StorageContext | None = None


def current() -> StorageContext:
    global _CURRENT
    if _CURRENT is None:
        _CURRENT = StorageContext()
    return _CURRENT


def configure(settings: StorageSettings, say: Callable[[str], None] | None = None) -> StorageContext:
    global _CURRENT
    close()
    _CURRENT = StorageContext(settings, say)
    return _CURRENT


def close() -> None:
    global _CURRENT
    if _CURRENT is not None:
        _CURRENT.close()
    _CURRENT = None


atexit.register(close)  # a moto server never outlives the process that started it
