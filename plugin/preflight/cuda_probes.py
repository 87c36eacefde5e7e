"""The two GPU-side hooks of `gather_hardware`: load a GPU while NVML reads its link and clock
state, and time a peer-to-peer copy between two GPUs.

An idle GPU drops its PCIe link to a lower generation to save power and reports GPU_IDLE as its
clock event, so both are read with work queued: a few hundred milliseconds of matmuls enqueued
without a sync, NVML read while they run, then a sync.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from typing import Iterator

import torch

from .hardware_facts import P2PPair

__all__ = ["busy", "peer_copy", "COPY_BYTES"]

COPY_BYTES = 256 << 20  # per peer copy: long enough (ms) that launch latency does not count
_BUSY_N, _BUSY_ITERS = 4096, 40  # fp16 4096^3 x 40 = 5.5 TFLOP: ~0.1-1 s on any data-centre GPU


@contextlib.contextmanager
def busy(index: int) -> Iterator[bool]:
    """Keep cuda:`index` busy inside the block; yields False (and does nothing) without CUDA."""
    if not torch.cuda.is_available() or index >= torch.cuda.device_count():
        yield False
        return
    dev = torch.device("cuda", index)
    g = torch.Generator(device=dev).manual_seed(index)
    a = torch.randn(_BUSY_N, _BUSY_N, device=dev, dtype=torch.float16, generator=g)
    with torch.cuda.device(dev):
        for _ in range(_BUSY_ITERS):
            torch.mm(a, a)
        time.sleep(0.05)  # the link trains up within milliseconds of traffic
        try:
            yield True
        finally:
            torch.cuda.synchronize(dev)


def peer_copy(a: int, b: int, reps: int = 5, nbytes: int = COPY_BYTES) -> P2PPair:
    """Median bandwidth of `reps` copies cuda:a -> cuda:b, and whether the copy is exact."""
    da, db = torch.device("cuda", a), torch.device("cuda", b)
    g = torch.Generator(device=da).manual_seed(a * 1000 + b)
    src = torch.randint(0, 2**31 - 1, (nbytes // 4,), device=da, dtype=torch.int32, generator=g)
    dst = torch.empty_like(src, device=db)
    dst.copy_(src)  # warm-up: peer mappings are set up on the first copy
    times = []
    for _ in range(reps):
        torch.cuda.synchronize(da)
        torch.cuda.synchronize(db)
        t0 = time.perf_counter()
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize(da)
        torch.cuda.synchronize(db)
        times.append(time.perf_counter() - t0)
    correct = bool(torch.equal(dst.to(da), src))
    return P2PPair(a, b, None, torch.cuda.can_device_access_peer(a, b), nbytes / statistics.median(times) / 1e9,
                   correct)
