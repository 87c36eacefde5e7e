"""Per-pytest-session state: the resolved device and --gpu profile, defaults, the records
collected so far, and writing the results file at the end."""

from __future__ import annotations

import datetime as _dt
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from plugin.catalog import GpuSpec, detect_gpu, get_gpu
from plugin.errors import DeviceMismatch
from plugin.record import Record

__all__ = ["BenchSession", "resolve_profile"]


def _detected() -> tuple[str | None, int | None]:
    if not torch.cuda.is_available():
        return None, None
    props = torch.cuda.get_device_properties(0)
    return props.name, props.total_memory


def resolve_profile(requested: str) -> tuple[str, GpuSpec | None, torch.device]:
    """(profile label, catalog spec or None, device) for --gpu; refuses a contradiction.

    --gpu=cpu on a GPU machine runs on the CPU on purpose; any GPU profile must match the GPU
    that is present, or every number in the results would be mislabelled.
    """
    name, memory = _detected()
    found = detect_gpu(name, memory)
    found_label = found.name if found else f"unknown GPU {name!r}"
    if requested == "auto":
        if name is None:
            return "cpu", found, torch.device("cpu")
        return (found.name if found else name), found, torch.device("cuda:0")
    spec = get_gpu(requested)
    if spec.name == "cpu":
        return "cpu", spec, torch.device("cpu")
    if found is None or found.name != spec.name:
        what = "no CUDA GPU (CPU only)" if name is None else f"{name} (profile {found_label})"
        raise DeviceMismatch(
            f"--gpu={requested} was requested but the detected device is {what}; run on a "
            f"{requested} machine, or pass --gpu=auto (or the detected profile) so results are "
            f"not mislabelled"
        )
    return spec.name, spec, torch.device("cuda:0")


@dataclass
class BenchSession:
    profile: str  # --gpu profile label recorded with every result
    spec: GpuSpec | None
    device: torch.device
    size: str
    steps: int
    warmup: int
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
