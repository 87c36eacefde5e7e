"""Collective bandwidth benchmark, one process per rank under torchrun:

    torchrun --standalone --nproc-per-node 8 -m trainbench.cli.rank collectives --out /tmp/coll
    python -m torch.distributed.run --standalone --nproc-per-node 2 \\
        -m trainbench.cli.rank collectives --out /tmp/coll --max-bytes 4194304   # CPU, gloo

For each op and size: one untimed call on patterned data whose result is checked (the reduced
values are what they must be), `warmup` untimed calls, then `trials` timed trials of `iters`
back-to-back calls each (time per call = trial time / iters). Before each trial the ranks meet
at a barrier and the device is synchronized; the trial ends when this rank's device has
finished. A trial's time is the slowest rank's (the collective is done when every rank is);
the reported time is the median over trials, with p10/p90 and min/max as spread. all_reduce is
in place: its timed calls run on zeros, so repeated sums never overflow; the other ops do not
modify their input and are checked again after the last timed call.

Sizes and bandwidths: see plugin/distributed/bandwidth.py (nccl-tests definitions and size
convention). With `--results PATH` rank 0 also writes a trainbench results file (multi-node).
"""

from __future__ import annotations

import os
import statistics
from typing import Any, Callable

import numpy as np
import torch
import torch.distributed as dist

from .bandwidth import OPS, algbw_gbps, busbw_factor, busbw_gbps, element_count
from .topology import detect_topology, effective_nccl_env
from .worker import FaultPoint, RankContext, init_ranks
from ..harness.timing import DeviceClock

__all__ = ["DTYPES", "run_ranks", "size_sweep", "summarize"]

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# torch >= 2.12 names the tensor-in/tensor-out forms *_single; older ones *_into_tensor / *_tensor
_all_gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
_reduce_scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


def size_sweep(min_bytes: int, max_bytes: int, factor: int) -> list[int]:
    """min, min*factor, ... up to and including max (nccl-tests -b/-e/-f)."""
    if min_bytes < 1 or max_bytes < min_bytes or factor < 2:
        raise ValueError(f"bad sweep: min {min_bytes}, max {max_bytes}, factor {factor}")
    sizes, s = [], min_bytes
    while s <= max_bytes:
        sizes.append(s)
        s *= factor
    return sizes


def _pattern(count: int, rank: int, dtype: torch.dtype, device: torch.device, offset: int = 0) -> torch.Tensor:
    # small integers: exact in fp32, and in fp16/bf16 for a few ranks; (rank + 1) + (i mod 13)
    # int32 indices: half the transient memory of int64 on a 1 GiB buffer (counts stay < 2**31)
    return ((torch.arange(offset, offset + count, device=device, dtype=torch.int32) % 13) + (rank + 1)).to(dtype)


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype in (torch.float16, torch.bfloat16):
        return bool(torch.allclose(a.float(), b.float(), rtol=1e-2, atol=0))
    return bool(torch.equal(a, b))


class _Case:
    """One op at one size on this rank: buffers, the call, and the correctness check."""

    def __init__(self, op: str, count: int, ctx: RankContext, dtype: torch.dtype):
        self.op, self.count, self.ctx, self.dtype = op, count, ctx, dtype
        n, r, dev = ctx.world_size, ctx.rank, ctx.device
        self.share = count // n
        if op == "all_reduce":
            self.buf = _pattern(count, r, dtype, dev)
            self.call: Callable[[], Any] = lambda: dist.all_reduce(self.buf)
        elif op == "all_gather":
            self.inp = _pattern(self.share, r, dtype, dev)
            self.buf = torch.empty(self.share * n, dtype=dtype, device=dev)
            self.call = lambda: _all_gather(self.buf, self.inp)
        elif op == "reduce_scatter":
            self.inp = _pattern(count, r, dtype, dev)
            self.buf = torch.empty(self.share, dtype=dtype, device=dev)
            self.call = lambda: _reduce_scatter(self.buf, self.inp)
        elif op == "broadcast":
            self.buf = _pattern(count, 0, dtype, dev) if r == 0 else torch.full((count,), -1, dtype=dtype, device=dev)
            self.call = lambda: dist.broadcast(self.buf, src=0)
        else:
            raise ValueError(f"unknown collective {op!r}; known: {', '.join(OPS)}")

    def check(self) -> bool:
        n, r, dev, dt = self.ctx.world_size, self.ctx.rank, self.ctx.device, self.dtype
        if self.op == "all_reduce":
            want = (torch.arange(self.count, device=dev, dtype=torch.int32) % 13) * n + n * (n + 1) // 2
            return _close(self.buf, want.to(dt))
        if self.op == "all_gather":
            return all(_close(self.buf[q * self.share:(q + 1) * self.share], _pattern(self.share, q, dt, dev))
                       for q in range(n))
        if self.op == "reduce_scatter":
            base = torch.arange(r * self.share, (r + 1) * self.share, device=dev, dtype=torch.int32) % 13
            return _close(self.buf, (base * n + n * (n + 1) // 2).to(dt))
        return _close(self.buf, _pattern(self.count, 0, dt, dev))

    def zero_for_timing(self) -> None:
        if self.op == "all_reduce":
            self.buf.zero_()  # sums of zeros stay zeros: no overflow over many timed calls

    def check_after_timing(self) -> bool:
        if self.op == "all_reduce":
            return bool((self.buf == 0).all())
        return self.check()


def _run_case(case: _Case, ctx: RankContext, clock: DeviceClock, fault: FaultPoint, warmup: int, trials: int,
              iters: int) -> tuple[list[float], bool]:
    case.call()
    ok = case.check()
    case.zero_for_timing()
    for _ in range(warmup):
        case.call()
    times = []
    for _ in range(trials):
        fault()
        clock.synchronize()
        ctx.barrier()
        start = clock.mark()
        for _ in range(iters):
            case.call()
        end = clock.mark()
        clock.synchronize()
        times.append(clock.seconds(start, end) / iters)
    return times, ok and case.check_after_timing()


def summarize(op: str, size_bytes: int, world_size: int, trial_times_s: list[float]) -> dict[str, Any]:
    """Median time over trials -> algbw/busbw; the spread as time quantiles."""
    t = np.asarray(trial_times_s, dtype=float)
    median = float(statistics.median(trial_times_s))
    return {
        "time_s": median,
        "time_p10_s": float(np.percentile(t, 10)),
        "time_p90_s": float(np.percentile(t, 90)),
        "time_min_s": float(t.min()),
        "time_max_s": float(t.max()),
        "algbw_gbps": algbw_gbps(size_bytes, median),
        "busbw_gbps": busbw_gbps(op, world_size, size_bytes, median),
        # bandwidth at the fastest trial: the best the link did, as a second view
        "busbw_gbps_best": busbw_gbps(op, world_size, size_bytes, float(t.min())),
    }


def run_ranks(args: Any) -> int:
    """This rank's part of the benchmark; `args` as parsed by `trainbench.cli.rank`."""
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    for op in ops:
        busbw_factor(op, 1)  # unknown op -> ValueError naming the known ones
    ctx = init_ranks(args.backend, args.out, args.timeout)
    max_bytes = args.max_bytes or (2**30 if ctx.backend == "nccl" else 4 * 2**20)
    dtype = DTYPES[args.dtype]
    clock, fault = DeviceClock(ctx.device), FaultPoint(ctx.rank)
    mine = []
    for size in size_sweep(args.min_bytes, max_bytes, args.factor):
        for op in ops:
            count, used = element_count(op, size, ctx.world_size, dtype.itemsize)
            case = _Case(op, count, ctx, dtype)
            times, ok = _run_case(case, ctx, clock, fault, args.warmup, args.trials, args.iters)
            mine.append({"op": op, "size_bytes": used, "count": count, "times_s": times, "correct": ok})
            del case
    ctx.write_rank({"cases": mine})
    everyone = ctx.gather(mine)
    if ctx.rank == 0:
        result = {
            "benchmark": "collectives",
            "world_size": ctx.world_size,
            "backend": ctx.backend,
            "dtype": args.dtype,
            "warmup": args.warmup,
            "trials": args.trials,
            "iters": args.iters,
            "nccl_env": effective_nccl_env(os.environ),
            "detected": detect_topology(),
            "cases": [_combine(cases, ctx.world_size) for cases in zip(*everyone)],
        }
        ctx.write_result(result)
        if args.results:
            from .fold import write_results_file

            write_results_file(args.results, result, topology=args.topology)
    ctx.close()
    return 0


def _combine(per_rank: tuple[dict[str, Any], ...], world_size: int) -> dict[str, Any]:
    """One case over all ranks: trial time = slowest rank; correct only if correct everywhere."""
    first = per_rank[0]
    trials = [max(ts) for ts in zip(*(c["times_s"] for c in per_rank))]
    return {
        "op": first["op"],
        "size_bytes": first["size_bytes"],
        "count": first["count"],
        "trial_times_s": trials,
        "correct": all(c["correct"] for c in per_rank),
        "incorrect_ranks": [r for r, c in enumerate(per_rank) if not c["correct"]],
        "busbw_factor": str(busbw_factor(first["op"], world_size)),
        **summarize(first["op"], first["size_bytes"], world_size, trials),
    }

