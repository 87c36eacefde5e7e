"""A filesystem wrapper that holds reads to a disk's IOPS and MB/s limits.

Model: the disk is one server with two budgets, bytes/s and operations/s. A read of b bytes
costs b byte-tokens and ceil(b / io_unit) operations (AWS counts SSD I/O in units of up to
256 KiB; a larger read is several operations). Each budget keeps a "next free" time (GCRA /
virtual scheduling): a read that arrives at t finishes no earlier than
max(t - SLACK_S, next_free) + cost / rate on either budget, and the caller sleeps until then.
N bytes therefore take N / rate seconds however they are split. SLACK_S (20 ms) of unused budget
carries over so that a serial reader's own per-read overhead does not pile up on top of the
limit; it is not a burst bucket (cloud burst credits are not modelled: the baseline is).

The budgets live in shared memory with a lock, so ALL loader worker processes draw from one
disk -- the measured aggregate rate is the limit, whatever --num-workers is. (The wrapper
travels into workers with the data set; under fork it is inherited, under spawn the shared
block is passed through the Process arguments, which multiprocessing allows.) Time is
`time.monotonic`: one system-wide clock that every process reads alike.
"""

from __future__ import annotations

import math
import multiprocessing
import time
from dataclasses import dataclass
from typing import Any

from fsspec.spec import AbstractFileSystem

__all__ = ["DiskLimits", "SharedBudget", "ThrottledFileSystem"]

IO_UNIT = 256 * 1024  # bytes per counted operation (AWS EBS SSD volumes: I/O up to 256 KiB)
SLACK_S = 0.02  # idle budget that carries over: limits may be exceeded by at most this much time


@dataclass(frozen=True)
class DiskLimits:
    bytes_per_s: float  # sustained throughput limit
    iops: float  # sustained operations per second
    io_unit: int = IO_UNIT  # a read of b bytes counts ceil(b / io_unit) operations

    def seconds_for(self, nbytes: int, ops: int) -> float:
        """Time the limits allow for `ops` reads totalling `nbytes` (no burst)."""
        return max(nbytes / self.bytes_per_s, ops / self.iops)


class SharedBudget:
    """The two 'next free' times in shared memory, one lock; picklable into worker processes."""

    def __init__(self, limits: DiskLimits):
        self.limits = limits
        ctx = multiprocessing.get_context()
        self._next_free = ctx.RawArray("d", 2)  # [bytes budget, ops budget], time.monotonic seconds
        self._lock = ctx.Lock()

    def acquire(self, nbytes: int) -> float:
        """Charge one read of `nbytes`; returns the monotonic time it may complete."""
        lim = self.limits
        ops = max(1, math.ceil(nbytes / lim.io_unit))
        with self._lock:
            now = time.monotonic()
            done_b = max(now - SLACK_S, self._next_free[0]) + nbytes / lim.bytes_per_s
            done_o = max(now - SLACK_S, self._next_free[1]) + ops / lim.iops
            self._next_free[0], self._next_free[1] = done_b, done_o
        return max(done_b, done_o)

    def wait(self, nbytes: int) -> None:
        delay = self.acquire(nbytes) - time.monotonic()
        if delay > 0:
            time.sleep(delay)


class _ThrottledFile:
    """A read-only file whose reads are charged to the budget."""

    def __init__(self, f: Any, budget: SharedBudget):
        self._f, self._budget = f, budget

    def read(self, length: int = -1) -> bytes:
        data = self._f.read(length)
        self._budget.wait(len(data))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._f.close()

    def __iter__(self):
        return iter(self._f)


class ThrottledFileSystem(AbstractFileSystem):
    """Reads through `fs`, held to `budget`; metadata calls (ls, info) are free."""

    protocol = "throttled"
    cachable = False  # each instance carries its own budget

    def __init__(self, fs: AbstractFileSystem, budget: SharedBudget, **kwargs):
        super().__init__(**kwargs)
        self.fs = fs
        self.budget = budget

    def cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs) -> bytes:
        data = self.fs.cat_file(path, start=start, end=end, **kwargs)
        self.budget.wait(len(data))
        return data

    def _open(self, path: str, mode: str = "rb", **kwargs):
        if "r" not in mode:
            raise PermissionError(f"{path}: throttled storage is read-only; prepare data on the underlying directory")
        return _ThrottledFile(self.fs.open(path, mode, **kwargs), self.budget)

    def ls(self, path: str, detail: bool = True, **kwargs):
        return self.fs.ls(path, detail=detail, **kwargs)

    def info(self, path: str, **kwargs):
        return self.fs.info(path, **kwargs)

    def __reduce__(self):
        return ThrottledFileSystem, (self.fs, self.budget)
