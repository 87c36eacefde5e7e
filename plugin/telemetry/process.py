"""CPU twin of the NVML sampler: peak resident set size of this process and its DataLoader
workers over the measured window, and mean CPU utilization.

On Linux the kernel keeps each process's RSS high-water mark (VmHWM in /proc/<pid>/status), and
writing "5" to /proc/<pid>/clear_refs resets it: the window's exact peak for two file reads and
no sampling thread. A 20 Hz psutil thread cost about 3% of a tiny CPU model's throughput through
the GIL (measured: bench/test_harness_overhead.py), so a thread is only the fallback elsewhere.
The peak reported is the sum of per-process peaks (self + workers alive at the end): an upper
bound of their simultaneous peak, labelled process RSS, never mixed with device memory.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import psutil

from .sampler import PeriodicSampler

__all__ = ["ProcessTelemetry"]

_HWM = re.compile(r"^VmHWM:\s+(\d+) kB", re.M)


def _hwm_bytes(pid: int) -> int | None:
    try:
        m = _HWM.search(Path(f"/proc/{pid}/status").read_text())
    except OSError:
        return None
    return int(m.group(1)) * 1024 if m else None


def _reset_hwm(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


class ProcessTelemetry:
    def __init__(self, hz: float = 5.0):
        self._proc = psutil.Process()
        self._kernel_peak = _hwm_bytes(self._proc.pid) is not None and _reset_hwm(self._proc.pid)
        self._sampler = None if self._kernel_peak else PeriodicSampler(self._sample, hz)
        self.rss_peak = 0
        self._t0 = self._cpu0 = 0.0

    def _children(self) -> list[psutil.Process]:
        try:
            return self._proc.children(recursive=True)
        except psutil.Error:
            return []

    def _rss_now(self) -> int:
        rss = self._proc.memory_info().rss
        for child in self._children():
            try:
                rss += child.memory_info().rss
            except psutil.Error:  # a worker that just exited
                pass
        return rss

    def _sample(self) -> None:
        self.rss_peak = max(self.rss_peak, self._rss_now())

    def _cpu_s(self) -> float:
        t = self._proc.cpu_times()
        return t.user + t.system

    def start(self) -> None:
        if self._kernel_peak:
            for p in [self._proc, *self._children()]:
                _reset_hwm(p.pid)
        else:
            self.rss_peak = self._rss_now()
            self._sampler.start()
        self._t0, self._cpu0 = time.perf_counter(), self._cpu_s()

    def stop(self) -> dict[str, Any]:
        wall, cpu = time.perf_counter() - self._t0, self._cpu_s() - self._cpu0
        if self._kernel_peak:
            peaks = [_hwm_bytes(p.pid) for p in [self._proc, *self._children()]]
            self.rss_peak = sum(p for p in peaks if p is not None)
            method = "kernel VmHWM"
        else:
            self._sampler.stop()
            method = "sampled"
        return {
            "rss_peak_bytes": self.rss_peak,
            "rss_peak_method": method,
            "cpu_percent_mean": 100.0 * cpu / wall if wall > 0 else None,
        }
