"""The measured items of the hardware tier: the burn test and the achievable matmul peak, run on
every GPU of the node at once (one thread per device: the GEMMs release the GIL), and judged.

A node is as fast as its slowest GPU (data-parallel training waits for it at every all-reduce), so
the slowest GPU sets the node's figure, and any GPU under 95% of the node's median is named.
"""

from __future__ import annotations

import statistics
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

import torch

from ..harness.peak import MatmulPeak
from .burn import DROP_LIMIT, BurnResult
from .check import FAIL, NA, PASS, WARN, Check

__all__ = ["on_every_device", "node_devices", "check_burn", "check_peak", "SLOW_GPU_RATIO"]

G = "hardware"
SLOW_GPU_RATIO = 0.95  # a GPU this far under the node median is a straggler worth naming
T = TypeVar("T")


def node_devices() -> list[torch.device]:
    """Every CUDA device, or the CPU when there is none."""
    if torch.cuda.is_available():
        return [torch.device("cuda", i) for i in range(torch.cuda.device_count())]
    return [torch.device("cpu")]


def on_every_device(fn: Callable[[torch.device], T], devices: Sequence[torch.device]) -> list[T]:
    """`fn(device)` on all `devices` at the same time (so shared power and cooling are loaded
    as in training); results in device order."""
    if len(devices) == 1:
        return [fn(devices[0])]
    with ThreadPoolExecutor(max_workers=len(devices)) as pool:
        return list(pool.map(fn, devices))


def _stragglers(values: dict[str, float]) -> list[str]:
    if len(values) < 2:
        return []
    med = statistics.median(values.values())
    return [f"{d} ({v / med:.0%} of the median)" for d, v in values.items() if v < SLOW_GPU_RATIO * med]


def _tf(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x / 1e12:.1f} TFLOPS" if x >= 1e12 else f"{x / 1e9:.1f} GFLOP/s"


def check_burn(results: Sequence[BurnResult], drop_limit: float = DROP_LIMIT) -> Check:
    if not results:
        return Check("burn", G, NA, "burn test skipped (--skip-burn or --burn-s 0)")
    r0 = results[0]
    what = f"{r0.seconds:.3g} s of {r0.precision} {r0.n}^3 GEMMs on {len(results)} device(s)"
    checked = sum(r.results_checked for r in results)
    m = {"burn_s": r0.seconds, "results_checked": checked, "mismatches": sum(r.mismatches for r in results),
         "first_flops_per_s": min((r.first_flops_per_s or 0) for r in results) or None,
         "last_flops_per_s": min((r.last_flops_per_s or 0) for r in results) or None,
         "drop": max((r.drop or 0.0) for r in results)}
    corrupt = [r for r in results if r.mismatches or not r.reference_ok]
    if corrupt:
        detail = "; ".join(f"{r.device}: {r.mismatches} element(s) off the reference in {r.results_checked} results"
                           + ("" if r.reference_ok else f", first result off float64 by {r.reference_error:.2g}")
                           for r in corrupt)
        return Check("burn", G, FAIL, f"{what}: silent data corruption -- {detail}",
                     "do not train on this GPU: ask the provider for another machine "
                     "(cross-check: dcgmi diag -r 3)", metrics=m)
    # only a GPU's drop is judged: a CPU's clocks are not throttled by this loop, and on a shared
    # box a slower last fifth is other people's work
    dropped = [r for r in results if r.drop is not None and r.drop > drop_limit and r.device.startswith("cuda")]
    curve = "; ".join(f"{r.device}: {_tf(r.first_flops_per_s)} first fifth, {_tf(r.last_flops_per_s)} last fifth"
                      + (f" ({-r.drop:+.1%})" if r.drop is not None else "") + _telemetry(r) for r in results)
    slow = _stragglers({r.device: r.last_flops_per_s for r in results if r.last_flops_per_s})
    if not r0.device.startswith("cuda") and r0.drop is not None and r0.drop > drop_limit:
        curve += " (a CPU's drop is not judged: on a shared machine it is other work)"
    if dropped or slow:
        parts = []
        if dropped:
            events = sorted({e for r in dropped for e in r.events_seen})
            parts.append("sustained drop over " + f"{drop_limit:.0%} on " + ", ".join(r.device for r in dropped)
                         + (f", clock events seen: {', '.join(events)}" if events else ", no clock event reported"))
        if slow:
            parts.append("slow GPU(s) " + ", ".join(slow))
        return Check("burn", G, WARN, f"{what}, 0 mismatches in {checked} results: " + "; ".join(parts) + f". {curve}",
                     "thermal or power throttling: check cooling and the power limit item; a slow GPU sets the "
                     "pace of every data-parallel step", metrics=m)
    return Check("burn", G, PASS, f"{what}, 0 mismatches in {checked} results. {curve}", metrics=m)


def _telemetry(r: BurnResult) -> str:
    last = r.samples[-1] if r.samples else None
    if last is None or last.sm_clock_mhz is None:
        return ""
    power = f", {last.power_w:.0f} W" if last.power_w is not None else ""
    temp = f", {last.temperature_c} C" if last.temperature_c is not None else ""
    return f" [end: SM {last.sm_clock_mhz} MHz{power}{temp}]"


def check_peak(peaks: Sequence[Sequence[MatmulPeak]]) -> Check:
    """`peaks[d]` = device d's probe at each precision. The node figure per precision is the
    slowest device's."""
    if not peaks or not peaks[0]:
        return Check("matmul_peak", G, NA, "matmul peak not measured (--no-peak)")
    per_prec: dict[str, dict[str, float]] = {}
    for dev in peaks:
        for p in dev:
            per_prec.setdefault(p.precision, {})[p.device] = p.flops_per_s
    node = {prec: min(v.values()) for prec, v in per_prec.items()}
    m = {f"peak_{prec}_flops_per_s": v for prec, v in node.items()}
    first = {p.precision: p for p in peaks[0]}
    lines = [f"{prec} {_tf(v)} (best shape {first[prec].shape[0]}^3)" for prec, v in node.items()]
    head = (f"measured achievable matmul peak, slowest of {len(peaks)} device(s): " if len(peaks) > 1 else
            f"measured achievable matmul peak on {peaks[0][0].device}: ") + ", ".join(lines)
    slow = {prec: _stragglers(v) for prec, v in per_prec.items()}
    slow = {k: v for k, v in slow.items() if v}
    if slow:
        return Check("matmul_peak", G, WARN, head + "; slow: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in slow.items()),
                     "a slow GPU sets the pace of every data-parallel step: check its clocks and power items, or ask "
                     "the provider", metrics=m)
    return Check("matmul_peak", G, PASS, head, metrics=m)
