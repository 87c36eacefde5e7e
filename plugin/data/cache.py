"""`<backend>+cache`: any backend behind fsspec's whole-file local cache (simplecache), the
object-store-plus-local-disk setup. The first read of a shard downloads all of it (cold); later
reads are local (warm).

One change to simplecache: the download is made safe for several loader workers sharing one
cache directory. fsspec writes the cache file in place, so a second worker could find a
half-written shard and read it short. Here one worker downloads (an flock per shard), into a
temporary name, renamed when complete; the others wait for it and then read the local copy.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from typing import Any, Callable

from fsspec.implementations.cached import SimpleCacheFileSystem

__all__ = ["SharedSimpleCache", "CacheOpener"]


class SharedSimpleCache(SimpleCacheFileSystem):
    protocol = "trainbench-simplecache"

    def _get_cached_file_before_open(self, path, **kwargs):
        sha = self._mapper(path)
        fn = os.path.join(self.storage[-1], sha)
        self._mkcache()
        self._cache_size = None
        with open(fn + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            if os.path.exists(fn):
                return  # another worker downloaded it while we waited
            tmp = f"{fn}.{os.getpid()}.part"
            self.fs.get_file(path, tmp)
            os.replace(tmp, fn)


@dataclass
class CacheOpener:
    """Picklable () -> SharedSimpleCache over the filesystem `inner()` opens."""

    inner: Callable[[], Any]
    cache_dir: str  # local directory holding the cached shards (emptied for a cold run)

    def __call__(self) -> SharedSimpleCache:
        return SharedSimpleCache(fs=self.inner(), cache_storage=self.cache_dir, skip_instance_cache=True)
