"""Per-pytest-session state: the resolved device and --gpu profile, defaults, the records
collected so far, and writing the results file at the end."""

from __future__ import annotations

import datetime as _dt
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ..catalog import GpuSpec
from ..records.record import Record

__all__ = ["BenchSession"]


@dataclass
class BenchSession:
    profile: str  # --gpu profile label recorded with every result
    spec: GpuSpec | None
    device: torch.device
    size: str
    steps: int
    warmup: int
    min_warmup_s: float  # time floors of warm-up and window (options.time_floors)
    min_window_s: float
    grad_accum: int
    seed: int
    batch_size: int | None
    weights: str | None
    results_path: Path
    report_path: Path
    environment: dict[str, Any] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)
    records_by_test: dict[str, list[Record]] = field(default_factory=dict)

    @property
    def on_gpu(self) -> bool:
        return self.device.type == "cuda"

    def add(self, record: Record) -> Record:
        if record.gpu is None:
            record.gpu = self.profile
        self.records.append(record)
        self.records_by_test.setdefault(record.test, []).append(record)
        return record


def default_results_path(rootdir: Path) -> Path:
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return rootdir / "reports" / "results" / f"{stamp}-{socket.gethostname()}.json"
