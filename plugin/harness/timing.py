"""The one timing primitive: CUDA events on a GPU, `time.perf_counter` elsewhere.

A mark is cheap and never synchronizes; the device is synchronized only when a number is read
(`seconds`) or at the edges of a measured window (`synchronize`). On a GPU the marks sit on the
stream, so the time between two marks is GPU-timeline time: a gap between the last kernel of
one step and the first of the next is idle time, whatever the host was doing meanwhile.
"""

from __future__ import annotations

import time
from typing import Union

import torch

__all__ = ["DeviceClock", "Mark"]

Mark = Union[float, "torch.cuda.Event"]


class DeviceClock:
    def __init__(self, device: torch.device | str):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"

    def mark(self) -> Mark:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record(torch.cuda.current_stream(self.device))  # this device's stream, not device 0's
            return event
        return time.perf_counter()

    def seconds(self, start: Mark, end: Mark) -> float:
        """Elapsed seconds between two marks; synchronizes on `end` when it is a CUDA event."""
        if self.cuda:
            end.synchronize()
            return start.elapsed_time(end) / 1e3  # elapsed_time is in ms
        return end - start

    def synchronize(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)
