"""From a --storage name to batches: the loader the harness trains from."""

from __future__ import annotations

from typing import Any

from .backends import StorageSpec
from .context import current
from .dataset import collate_skipping
from .loader import LoaderConfig, make_loader
from .sampler import ShardShuffle

__all__ = ["storage_loader"]


def storage_loader(spec: StorageSpec, workload: str, size: str, count: int, seed: int, cfg: LoaderConfig, *,
                   cold_cache: bool = True) -> Any:
    """A StatefulDataLoader over `count` samples of `workload` read from `storage`.

    synthetic: the workload's generated data set (no storage, no decode). Any other backend:
    shards prepared on it once (cached), read and decoded in the loader workers, in
    shard-aware shuffled order. `cold_cache`: a +cache backend starts with an empty cache.
    """
    if spec.kind == "synthetic":
        from ..workloads import get_workload

        return make_loader(get_workload(workload).dataset(size, count, seed), cfg)
    data = current().open(spec, workload, size, seed, count, cold_cache=cold_cache)
    m = data.manifest
    shard_sizes = [len(r) for r in m.ranges]
    sampler = ShardShuffle(shard_sizes, seed=cfg.seed, shuffle=cfg.shuffle)
    collate = collate_skipping if data.dataset.skip_corrupt is not None else None
    loader = make_loader(data.dataset, cfg, sampler=sampler, collate_fn=collate)
    loader.trainbench_data = data  # the backend, manifest and cache dir, for reports
    return loader
