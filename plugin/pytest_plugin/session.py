"""Per-pytest-session state: the resolved device and --gpu profile, defaults, the records
collected so far (written to disk after every test by `journal.py`)."""

from __future__ import annotations

import datetime as _dt
import os
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
    # loader knobs for every training benchmark (--num-workers' first value, --prefetch-factor,
    # --pin-memory, --persistent-workers); None = the harness's automatic choice
    loader: dict[str, Any] = field(default_factory=dict)
    activation_checkpointing: bool = False  # --activation-checkpointing
    tuning: str = "tuned"  # --tuning
    environment: dict[str, Any] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)
    records_by_test: dict[str, list[Record]] = field(default_factory=dict)
    matmul_peaks: dict[str, Any] = field(default_factory=dict)  # precision -> MatmulPeak, measured once per session
    running: str | None = None  # node id of the test in progress (None between tests)
    pending: dict[str, Any] = field(default_factory=dict)  # axes of the benchmark in progress
    interrupted: str | None = None  # "SIGTERM" / "SIGINT" once the session is being stopped
    written: int = -1  # records on disk at the last write (nothing written yet: -1)
    session_index: int | None = None  # under --trainbench-resume: this session in environment.sessions
    write_s: list[float] = field(default_factory=list)  # seconds per durable write (results + md)

    @property
    def on_gpu(self) -> bool:
        return self.device.type == "cuda"

    def add(self, record: Record) -> Record:
        if record.gpu is None:
            record.gpu = self.profile
        if self.session_index is not None:
            record.config.setdefault("session", self.session_index)
        self.records.append(record)
        self.records_by_test.setdefault(record.test, []).append(record)
        return record


def default_results_path(rootdir: Path) -> Path:
    """`<UTC time>-<host>-<pid>.json`: the pid keeps two sessions started in the same second in
    one checkout apart (live processes on one host never share a pid)."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return rootdir / "reports" / "results" / f"{stamp}-{socket.gethostname()}-{os.getpid()}.json"
