"""Burn test: a seeded GEMM loop for `seconds`, every result compared with a reference.

In the spirit of gpu-burn and `dcgmi diag -r 2`: the same product C = A @ B is computed over
and over, and each result is compared with the first one on the device (a healthy GPU gives the
same bits for the same kernel on the same inputs). The comparison allows a few ulps
(`tolerance`), so only corrupted results count -- a flipped bit in a high mantissa or exponent
bit, a bad SM. The first result itself is checked once against float64 on the CPU for a few
rows, so a GPU that is wrong from the start is caught too. Mismatches are counted on the device
without a sync per iteration.

Throughput is read once per interval (one sync), with clocks, power, temperature and clock event
reasons from NVML; the last fifth of the intervals against the first fifth shows a sustained
drop (a thermal soak or a power cap biting).
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import torch

from ..harness.peak import matmul_flops
from ..harness.precision import get_precision
from ..harness.timing import DeviceClock
from ..telemetry.nvml import NvmlTelemetry

__all__ = ["BurnConfig", "BurnSample", "BurnResult", "burn", "default_burn_s", "DROP_LIMIT", "fifths"]

DROP_LIMIT = 0.05  # last fifth more than 5% below the first: a sustained drop, not noise
_REF_ROWS = 4  # rows of the first result checked against float64


def default_burn_s(device: torch.device) -> float:
    """About a minute on a GPU (long enough for a thermal soak to show), seconds on a CPU."""
    return 60.0 if torch.device(device).type == "cuda" else 3.0


@dataclass(frozen=True)
class BurnConfig:
    seconds: float = 60.0
    n: int | None = None  # matrix side; None = 8192 on a GPU (compute-bound), 256 on a CPU
    precision: str | None = None  # None = bf16 on GPUs that have it, else fp16 / fp32 on CPU
    interval_s: float | None = None  # throughput sample period; None = 1 s on GPU, 0.25 s on CPU
    seed: int = 0


@dataclass(frozen=True)
class BurnSample:
    t_s: float  # seconds since the burn started (end of the interval)
    flops_per_s: float
    sm_clock_mhz: int | None = None
    power_w: float | None = None
    temperature_c: int | None = None
    clock_events: tuple[str, ...] = ()


@dataclass
class BurnResult:
    device: str
    precision: str
    n: int
    seconds: float  # wall time burned
    results_checked: int  # GEMM results compared with the reference
    mismatches: int  # results elements outside the tolerance, summed over every comparison
    reference_error: float  # max |C - C_float64| / sqrt(n) over the checked rows
    reference_ok: bool
    samples: list[BurnSample] = field(default_factory=list)

    @property
    def first_flops_per_s(self) -> float | None:
        return fifths(self.samples)[0]

    @property
    def last_flops_per_s(self) -> float | None:
        return fifths(self.samples)[1]

    @property
    def drop(self) -> float | None:
        """1 - last fifth / first fifth (0.1 = 10% slower at the end); None with < 5 samples."""
        first, last = fifths(self.samples)
        return None if not first or last is None else 1.0 - last / first

    @property
    def events_seen(self) -> list[str]:
        seen = dict.fromkeys(e for s in self.samples for e in s.clock_events if e != "GPU_IDLE")
        return list(seen)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(first_flops_per_s=self.first_flops_per_s, last_flops_per_s=self.last_flops_per_s, drop=self.drop,
                 events_seen=self.events_seen)
        return d


def fifths(samples: list[BurnSample]) -> tuple[float | None, float | None]:
    """Median throughput of the first and the last fifth of the samples."""
    if len(samples) < 5:
        return None, None
    k = len(samples) // 5
    return (statistics.median(s.flops_per_s for s in samples[:k]),
            statistics.median(s.flops_per_s for s in samples[-k:]))


def _precision(device: torch.device, name: str | None) -> str:
    if name:
        return name
    if device.type != "cuda":
        return "fp32"
    return "bf16" if torch.cuda.get_device_capability(device)[0] >= 8 else "fp16"


def tolerance(dtype: torch.dtype, n: int) -> float:
    """Entries of A @ B with N(0, 1) inputs have standard deviation sqrt(n); four ulps of that is
    far below any corruption worth catching and far above reordering noise."""
    return 4.0 * torch.finfo(dtype).eps * math.sqrt(n)


def _reference_error(a: torch.Tensor, b: torch.Tensor, ref: torch.Tensor, cols: int = 1024) -> float:
    """max |ref - float64 product| / sqrt(n) over the first rows, computed on the CPU (not by the
    hardware under test), `cols` columns of B at a time to bound host memory (8192 x 1024 x 8 B)."""
    n = a.shape[1]
    rows = a[:_REF_ROWS].cpu().double()
    err = 0.0
    for j in range(0, b.shape[1], cols):
        exact = rows @ b[:, j:j + cols].cpu().double()
        err = max(err, float((ref[:_REF_ROWS, j:j + cols].cpu().double() - exact).abs().max()))
    return err / math.sqrt(n)


def reference_tolerance(dtype: torch.dtype, n: int, tf32: bool) -> float:
    """Bound on max |C - C_float64| / sqrt(n): rounding the output (a few ulps of `dtype`) plus
    accumulating n products (fp32 sums; tf32 rounds the inputs to 10 mantissa bits)."""
    acc = 2.0**-10 if tf32 else torch.finfo(torch.float32).eps
    return 4.0 * torch.finfo(dtype).eps + 4.0 * acc * math.sqrt(n)


def burn(device: torch.device | str, cfg: BurnConfig = BurnConfig(),
         inject: Callable[[torch.Tensor, int], None] | None = None) -> BurnResult:
    """Run the loop on `device`. `inject(c, i)` may alter result i before it is compared (tests
    flip one element to prove the check catches it)."""
    device = torch.device(device)
    cuda = device.type == "cuda"
    prec = get_precision(_precision(device, cfg.precision))
    prec.check(device)
    n = cfg.n or (8192 if cuda else 256)
    interval = cfg.interval_s or (1.0 if cuda else 0.25)
    dtype = prec.autocast_dtype or torch.float32
    clock = DeviceClock(device)
    nvml = NvmlTelemetry(device.index or 0) if cuda else None
    g = torch.Generator(device=device).manual_seed(cfg.seed)
    # the current device is per thread: CUDA events record on it, so set it (node burns run a thread per GPU)
    with prec.context(device), (torch.cuda.device(device) if cuda else contextlib.nullcontext()):
        a = torch.randn(n, n, device=device, dtype=dtype, generator=g)
        b = torch.randn(n, n, device=device, dtype=dtype, generator=g)
        ref = a @ b
        ref_err = _reference_error(a, b, ref)
        ref_ok = ref_err <= reference_tolerance(dtype, n, prec.tf32)
        tol = tolerance(dtype, n)
        c, diff = torch.empty_like(ref), torch.empty_like(ref)
        bad = torch.zeros((), device=device, dtype=torch.int64)
        flops = matmul_flops(n, n, n)
        samples: list[BurnSample] = []
        i, iters = 0, 1
        t0 = time.perf_counter()
        while (left := cfg.seconds - (time.perf_counter() - t0)) > 0:
            iters = max(1, min(iters, round(iters * left / interval)))  # the last interval ends on time
            t_start = time.perf_counter()
            marks = []  # (before, after) each GEMM: throughput is GEMM time, not the comparison's
            for _ in range(iters):
                marks.append(clock.mark())
                torch.mm(a, b, out=c)
                marks.append(clock.mark())
                if inject is not None:
                    inject(c, i)
                torch.sub(c, ref, out=diff)
                bad += diff.abs_().gt_(tol).sum(dtype=torch.int64)
                i += 1
            clock.synchronize()
            gemm_s = sum(clock.seconds(s0, s1) for s0, s1 in zip(marks[::2], marks[1::2]))
            wall_s = time.perf_counter() - t_start  # GEMMs + comparisons + launch: what paces the loop
            snap = nvml.snapshot() if nvml is not None else {}
            samples.append(BurnSample(time.perf_counter() - t0, flops * iters / gemm_s, snap.get("sm_clock_mhz"),
                                      snap.get("power_w"), snap.get("temperature_c"),
                                      tuple(snap.get("clock_events") or ())))
            iters = max(1, round(iters * interval / max(wall_s, 1e-6)))
        wall = time.perf_counter() - t0
    return BurnResult(str(device), prec.name, n, wall, i, int(bad), ref_err, bool(ref_ok), samples)
