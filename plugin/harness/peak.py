"""The achievable matmul peak of this device, measured: the denominator of `mfu_achievable`.

A datasheet peak is what the silicon could do at its boost clock with perfect kernels; a real
card under a real power cap gets less (ml-engineering's MAMF finder: H100 SXM bf16 about 794
TFLOPS of 989). This probe sweeps a few square matmul shapes at one precision on seeded normal
data (zeros would inflate throughput: the multipliers toggle less and draw less power), times
batches of them with the one timing primitive (CUDA events on a GPU, perf_counter on a CPU),
takes each shape's median batch, and reports the best shape. Every figure is measured; nothing
is scaled or assumed.
"""

from __future__ import annotations

import contextlib
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import torch

from .precision import get_precision
from .timing import DeviceClock

__all__ = ["ShapeTiming", "MatmulPeak", "probe_peak", "matmul_flops", "GPU_SHAPES", "CPU_SHAPES"]

GPU_SHAPES = (2048, 4096, 6144, 8192)  # square sides: from launch-bound to compute-bound on any data-centre GPU
CPU_SHAPES = (128, 256, 512)  # a 2-core box does a 512^3 fp32 matmul in milliseconds


def matmul_flops(m: int, n: int, k: int) -> float:
    return 2.0 * m * n * k  # one multiply and one add per term


@dataclass(frozen=True)
class ShapeTiming:
    m: int
    n: int
    k: int
    median_flops_per_s: float  # median over timed batches
    best_flops_per_s: float  # fastest batch
    batches: int  # timed batches
    iters_per_batch: int


@dataclass(frozen=True)
class MatmulPeak:
    device: str
    precision: str
    flops_per_s: float  # the best shape's median batch: the achievable peak
    shape: tuple[int, int, int]  # (m, n, k) of that shape
    shapes: tuple[ShapeTiming, ...]
    threads: int  # torch intra-op threads (what a CPU figure depends on)
    seed: int

    @property
    def method(self) -> str:
        sides = "/".join(str(s.m) for s in self.shapes)
        return (f"measured: median of timed batches per shape, best of square matmuls {sides} at {self.precision} "
                f"on {self.device}" + (f" ({self.threads} threads)" if self.device == "cpu" else ""))

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["method"] = self.method
        return d


def _time_shape(clock: DeviceClock, a: torch.Tensor, b: torch.Tensor, batch_s: float, batches: int) -> ShapeTiming:
    m, k = a.shape
    n = b.shape[1]
    flops = matmul_flops(m, n, k)
    out = torch.empty(m, n, device=a.device, dtype=a.dtype)
    for _ in range(2):  # warm-up: kernel selection, allocator, caches
        torch.mm(a, b, out=out)
    start = clock.mark()
    torch.mm(a, b, out=out)
    one = max(clock.seconds(start, clock.mark()), 1e-6)
    iters = max(1, int(batch_s / one))
    rates = []
    for _ in range(batches):
        start = clock.mark()
        for _ in range(iters):
            torch.mm(a, b, out=out)
        rates.append(flops * iters / clock.seconds(start, clock.mark()))
    return ShapeTiming(m, n, k, statistics.median(rates), max(rates), batches, iters)


def probe_peak(device: torch.device | str = "cpu", precision: str = "fp32", shapes: Sequence[int] | None = None,
               *, batch_s: float | None = None, batches: int = 5, seed: int = 0) -> MatmulPeak:
    """Sweep `shapes` (square sides) at `precision` on `device`; UnsupportedPrecision when the
    device cannot run it (tf32 on a CPU, bf16 on a T4)."""
    device = torch.device(device)
    prec = get_precision(precision)
    prec.check(device)
    cuda = device.type == "cuda"
    shapes = tuple(shapes or (GPU_SHAPES if cuda else CPU_SHAPES))
    batch_s = batch_s if batch_s is not None else (0.05 if cuda else 0.02)
    dtype = prec.autocast_dtype or torch.float32
    clock = DeviceClock(device)
    timings = []
    g = torch.Generator(device=device)
    with prec.context(device), (torch.cuda.device(device) if cuda else contextlib.nullcontext()):
        for side in shapes:
            g.manual_seed(seed + side)
            a = torch.randn(side, side, device=device, dtype=dtype, generator=g)
            b = torch.randn(side, side, device=device, dtype=dtype, generator=g)
            timings.append(_time_shape(clock, a, b, batch_s, batches))
            del a, b
    best = max(timings, key=lambda t: t.median_flops_per_s)
    return MatmulPeak(str(device), prec.name, best.median_flops_per_s, (best.m, best.n, best.k), tuple(timings),
                      torch.get_num_threads(), seed)

