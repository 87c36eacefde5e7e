"""Progress of the benchmark in flight: phase, step k of N, seconds per step, time left.

The harness asks `progress()` for the listener once per window; None (nobody listening) costs
nothing. Inside the timed loop the only extra work is one `perf_counter` read and a comparison
with `due`; a listener is called at most every `interval_s` and never at a synchronization
point. The seconds per step shown are host-side and unsynchronized: a progress hint, not a
measurement (the record's step times are the measurement).

The pytest plugin installs a listener that writes through pytest's terminal writer; the CLI one
that drives a tqdm bar. Tests install their own.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

__all__ = ["Update", "Progress", "progress", "listening", "format_update"]


@dataclass(frozen=True)
class Update:
    label: str  # which benchmark, e.g. "training[gpt-small-fp32]"
    phase: str  # "warm-up" or "measure"
    step: int  # steps done in this phase
    total: int  # steps in this phase
    s_per_step: float  # host seconds per step so far in this phase
    left_s: float  # this phase and the measured steps still to come

    @property
    def done(self) -> bool:
        return self.step >= self.total


def format_update(u: Update) -> str:
    if u.done and u.phase == "measure":
        return f"{u.label}: measured {u.total} steps, {u.s_per_step:.2f} s/step (host clock)"
    return (f"{u.label}: {u.phase} step {u.step}/{u.total}, {u.s_per_step:.2f} s/step, "
            f"~{u.left_s:.0f} s left")


class Progress:
    def __init__(self, emit: Callable[[Update], None], interval_s: float = 1.0, label: str = ""):
        self.emit = emit
        self.interval_s = interval_s
        self.label = label
        self.due = 0.0  # perf_counter time of the next update
        self._phase_start = 0.0

    def begin(self, phase: str, now: float) -> None:
        self._phase_start = now
        self.due = now + self.interval_s

    def report(self, phase: str, step: int, total: int, later_steps: int, now: float) -> None:
        """`later_steps`: steps of later phases (the measured window during warm-up)."""
        per = (now - self._phase_start) / max(step, 1)
        self.emit(Update(self.label, phase, step, total, per, per * (total - step + later_steps)))
        self.due = now + self.interval_s


_current: Progress | None = None


def progress() -> Progress | None:
    return _current


@contextmanager
def listening(listener: Progress | None) -> Iterator[Progress | None]:
    """Install `listener` for the windows run inside the block."""
    global _current
    previous, _current = _current, listener
    try:
        yield listener
    finally:
        _current = previous

