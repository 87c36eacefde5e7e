"""A background thread that samples at a fixed rate over a measured window."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

__all__ = ["PeriodicSampler"]


class PeriodicSampler:
    """Calls `sample()` every 1/hz seconds between `start()` and `stop()`."""

    def __init__(self, sample: Callable[[], None], hz: float = 20.0):
        self._sample = sample
        self._period = 1.0 / hz
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.count = 0
        self.duration_s = 0.0

    def _run(self) -> None:
        t0 = time.perf_counter()
        next_t = t0
        while not self._stop.is_set():
            self._sample()
            self.count += 1
            next_t += self._period
            self._stop.wait(max(0.0, next_t - time.perf_counter()))
        self.duration_s = time.perf_counter() - t0

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="trainbench-telemetry", daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()  # one last sample at the window's end
        self.count += 1
        return {"samples": self.count, "hz": self.count / self.duration_s if self.duration_s else None,
                "elapsed_s": self.duration_s}
