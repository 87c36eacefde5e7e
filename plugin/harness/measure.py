"""The measured window: warm-up steps (not measured), then timed optimizer steps.

Both phases have a step count AND a time floor: warm-up runs at least `warmup` steps and at
least `min_warmup_s` seconds; the window at least `steps` steps and at least `min_window_s`
seconds (a tenth of a second of steps says little about a VM whose speed drifts). The floors
are checked between steps with `time.perf_counter` only, once the step count is reached, so
the timed loop does nothing a plain training loop would not. On a GPU the host check runs
ahead of the device by the queued work; the window's wall time is still read after a sync.

Throughput: measured samples / wall time from the start of the first measured step
to the end of the last, with the device synchronized at both ends -- never a mean of per-step
rates. Per-step times and input waits come from the same clock marks, so they add up to the
window on the device timeline.
"""

from __future__ import annotations

import gc
import math
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from .progress import progress as current_progress
from .trainer import Trainer
from ..telemetry import NvmlTelemetry, ProcessTelemetry

__all__ = ["Measurement", "measure"]


@dataclass
class Measurement:
    samples: int  # samples processed in the measured window
    wall_s: float  # host wall time of the window, device synced at both ends
    step_times_s: list[float]  # per optimizer step, device timeline
    input_wait_s: list[float]  # per optimizer step: blocked in next(loader) (the loader's wait)
    losses: list[float]  # per measured step
    peak_mem_bytes: int | None
    peak_mem_reserved_bytes: int | None
    peak_mem_kind: str  # "cuda_allocated" or "process_rss": never mixed in one column
    telemetry: dict[str, Any] = field(default_factory=dict)
    copy_s: list[float] = field(default_factory=list)  # per optimizer step: host-to-device copy
    warmup_steps: int = 0  # steps the warm-up took to pass its count and its time floor
    warmup_s: float = 0.0  # host wall time of the warm-up, device synced at its end


def _capacity(steps: int, min_window_s: float, warmup_steps: int, warmup_s: float) -> int:
    """Loss slots to preallocate: the step count, or what the time floor needs at the warm-up's
    pace (+25%); the loop grows the buffer if the estimate falls short."""
    if min_window_s <= 0 or warmup_steps == 0 or warmup_s <= 0:
        return steps
    return max(steps, math.ceil(1.25 * min_window_s * warmup_steps / warmup_s))


def measure(trainer: Trainer, *, warmup: int, steps: int, samples_per_step: int,
            min_warmup_s: float = 0.0, min_window_s: float = 0.0) -> Measurement:
    """`warmup`/`steps` are minimum step counts, `min_warmup_s`/`min_window_s` minimum seconds.
    Distributed callers keep the floors at 0: every rank must run the same number of steps."""
    if steps < 1:
        raise ValueError("steps must be >= 1")
    clock, device = trainer.clock, trainer.device
    cuda = device.type == "cuda"
    process = ProcessTelemetry()
    # NVML init before the warm-up, not between it and the window; the handle found by UUID
    nvml = NvmlTelemetry(device.index if device.index is not None else torch.cuda.current_device()) if cuda else None
    # Garbage left by model construction or earlier benchmarks is collected before the warm-up,
    # not by a full collection (~150 ms with torch loaded, measured) inside the window. Not
    # between warm-up and window: a pause there lets a starved input pipeline queue batches
    # and the first measured steps would under-report the stall.
    gc.collect()
    listener = current_progress()  # None: no terminal is listening, no extra work below
    if listener is not None:
        listener.begin("warm-up", time.perf_counter())
    w0 = time.perf_counter()
    warm = 0
    while warm < warmup or (min_warmup_s > 0 and time.perf_counter() - w0 < min_warmup_s):
        trainer.step()
        warm += 1
        if listener is not None and (now := time.perf_counter()) >= listener.due:
            listener.report("warm-up", warm, warmup, steps, now)
    clock.synchronize()
    warm_s = time.perf_counter() - w0

    if cuda:
        torch.cuda.reset_peak_memory_stats(device)

    marks: list = []  # (before_fetch, after_fetch, after_copy) per micro-batch
    boundaries = []
    # Losses are copied into one preallocated device tensor (no sync). Keeping each step's 0-d
    # loss tensor alive instead slowed a tiny CPU model's later steps by ~10% (measured: the
    # small long-lived allocations fragment the heap the activations are carved from).
    losses = torch.empty(_capacity(steps, min_window_s, warm, warm_s), device=device)
    clock.synchronize()
    # telemetry after the synchronize that opens the window: the warm-up's tail is not billed
    process.start()
    if nvml is not None:
        nvml.start()
    t0 = time.perf_counter()
    if listener is not None:
        listener.begin("measure", t0)
    i = 0
    while i < steps or (min_window_s > 0 and time.perf_counter() - t0 < min_window_s):
        if i == losses.numel():  # the warm-up's pace underestimated the floor: double (rare)
            losses = torch.cat([losses, torch.empty_like(losses)])
        boundaries.append(len(marks))
        losses[i] = trainer.step(marks)
        i += 1
        # one clock read and a comparison per step; the listener runs at most every interval_s
        if listener is not None and (now := time.perf_counter()) >= listener.due:
            listener.report("measure", i, steps, 0, now)
    end = clock.mark()
    clock.synchronize()
    wall = time.perf_counter() - t0
    steps = i
    if listener is not None:
        listener.report("measure", steps, steps, 0, time.perf_counter())  # the window is over: "done"

    telemetry = process.stop()
    if nvml is not None:
        telemetry.update(nvml.stop())

    starts = [marks[i][0] for i in boundaries] + [end]
    step_times = [clock.seconds(a, b) for a, b in zip(starts, starts[1:])]
    waits = [clock.seconds(a, b) for a, b, _ in marks]
    copies = [clock.seconds(b, c) for _, b, c in marks]
    k = trainer.grad_accum
    input_wait = [sum(waits[i * k : (i + 1) * k]) for i in range(steps)]
    copy = [sum(copies[i * k : (i + 1) * k]) for i in range(steps)]

    if cuda:
        peak = torch.cuda.max_memory_allocated(device)
        reserved = torch.cuda.max_memory_reserved(device)
        kind = "cuda_allocated"
    else:
        peak, reserved, kind = telemetry["rss_peak_bytes"], None, "process_rss"
    return Measurement(
        samples=steps * samples_per_step,
        wall_s=wall,
        step_times_s=step_times,
        input_wait_s=input_wait,
        copy_s=copy,
        losses=losses[:steps].tolist(),
        peak_mem_bytes=peak,
        peak_mem_reserved_bytes=reserved,
        peak_mem_kind=kind,
        telemetry=telemetry,
        warmup_steps=warm,
        warmup_s=warm_s,
    )
