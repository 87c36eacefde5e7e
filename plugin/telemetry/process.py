"""CPU twin of the NVML sampler: process resident set size and CPU utilization (psutil)."""

from __future__ import annotations

from typing import Any

import psutil

from plugin.telemetry.sampler import PeriodicSampler

__all__ = ["ProcessTelemetry"]


class ProcessTelemetry:
    """Peak RSS of this process and its DataLoader workers (children), mean CPU percent."""

    def __init__(self, hz: float = 20.0):
        self._proc = psutil.Process()
        self._sampler = PeriodicSampler(self._sample, hz)
        self.rss_peak = 0
        self._cpu: list[float] = []
        self._children: list[psutil.Process] | None = None
        self._hz = hz

    def _rss(self, refresh_children: bool = False) -> int:
        rss = self._proc.memory_info().rss
        if refresh_children or self._children is None:
            try:  # a scan of /proc: done about once a second, not at every sample
                self._children = self._proc.children(recursive=True)
            except psutil.Error:
                self._children = []
        for child in self._children:
            try:
                rss += child.memory_info().rss
            except psutil.Error:  # a worker that just exited
                pass
        return rss

    def _sample(self) -> None:
        refresh = len(self._cpu) % max(1, int(self._hz)) == 0
        self.rss_peak = max(self.rss_peak, self._rss(refresh))
        self._cpu.append(self._proc.cpu_percent(None))

    def start(self) -> None:
        self._proc.cpu_percent(None)  # prime: the first call returns 0.0
        self.rss_peak = self._rss(refresh_children=True)
        self._sampler.start()

    def stop(self) -> dict[str, Any]:
        meta = self._sampler.stop()
        cpu = self._cpu[1:] or self._cpu
        return {
            "rss_peak_bytes": self.rss_peak,
            "cpu_percent_mean": sum(cpu) / len(cpu) if cpu else None,
            "process_samples": meta["samples"],
        }
