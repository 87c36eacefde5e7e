"""Read throughput of the data directory: write a probe file, evict it from the page cache,
read it back timed.

The page-cache eviction uses `posix_fadvise(POSIX_FADV_DONTNEED)` after `fsync`, which drops the
file's clean pages on Linux local file systems; where the kernel ignores the hint (some network
and overlay file systems) the read is served from memory and the figure is an upper bound --
`cold` says which was attempted. 32 MiB in 1 MiB reads: big enough to pass the drive's first
burst, small enough to take well under a second on any disk worth training from.
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ReadProbe", "probe_read"]

_CHUNK = 1 << 20  # bytes per read() call


@dataclass(frozen=True)
class ReadProbe:
    mb_per_s: float | None  # 1e6 bytes per second; None when the probe could not run
    bytes_read: int
    seconds: float
    cold: bool  # page cache eviction was requested (fadvise available)
    error: str | None = None  # why it could not run (read-only directory, ...)


def probe_read(directory: str | os.PathLike, size: int = 32 << 20) -> ReadProbe:
    directory = Path(directory)
    try:
        fd, name = tempfile.mkstemp(prefix=".trainbench-readprobe-", dir=directory)
    except OSError as exc:
        return ReadProbe(None, 0, 0.0, False, f"cannot write a probe file in {directory}: {exc.strerror or exc}")
    cold = hasattr(os, "posix_fadvise")
    try:
        block = os.urandom(_CHUNK)  # incompressible: no help from compressing file systems
        with os.fdopen(fd, "wb") as f:
            for _ in range(size // _CHUNK):
                f.write(block)
            f.flush()
            os.fsync(f.fileno())
            if cold:
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        read = 0
        t0 = time.perf_counter()
        with open(name, "rb", buffering=0) as f:
            while chunk := f.read(_CHUNK):
                read += len(chunk)
        dt = time.perf_counter() - t0
        return ReadProbe(read / dt / 1e6 if dt > 0 else None, read, dt, cold)
    except OSError as exc:
        return ReadProbe(None, 0, 0.0, cold, f"read probe in {directory} failed: {exc.strerror or exc}")
    finally:
        try:
            os.unlink(name)
        except OSError:
            pass
