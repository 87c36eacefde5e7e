"""Synthetic results files for the report and gate tests: real `write_results` output, with
step times drawn from a seeded generator so every number is known."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from trainbench.records.record import Record
from trainbench.records.results import write_results

CPU_ENV = {
    "start_time": "2026-11-29T10:00:00+00:00", "host": "ci-a", "torch": "2.13.0", "cuda": None,
    "gpu_profile": "cpu", "gpu_name": None, "gpu_count": 0, "cpu_model": "Test CPU", "cpu_count": 2,
    "driver": None, "git_commit": "aaaa",
}
GPU_ENV = dict(CPU_ENV, cuda="12.8", gpu_profile="h100-80g", gpu_name="NVIDIA H100 80GB HBM3", gpu_count=8,
               driver="570.1", host="gpu-b", cpu_model="Xeon", cpu_count=96)


def step_times(median_s: float, n: int = 20, spread: float = 0.02, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [median_s * (1 + spread * (rng.random() - 0.5)) for _ in range(n)]


def training(test: str = "bench/test_training.py::test_training[resnet50-fp32]", *, workload="resnet50",
             precision="fp32", storage="memory", batch=16, step_s=0.01, n=20, seed=0, gpu="cpu",
             mem_kind="process_rss", extra: dict[str, Any] | None = None, **fields) -> Record:
    times = step_times(step_s, n, seed=seed)
    med = sorted(times)[len(times) // 2]
    metrics = {"samples_per_s": batch / med, "step_time_median_s": med, "stall_ratio": 0.05,
               "peak_mem_bytes": 300 * 2**20, "mfu": None, **(extra or {})}
    return Record(test=test, kind="training", workload=workload, size="tiny", precision=precision,
                  batch_size=batch, storage=storage, gpu=gpu, metrics=metrics, step_times_s=times,
                  config={"peak_mem_kind": mem_kind}, **fields)


def write(path: Path, env: dict[str, Any], records: list[Record]) -> Path:
    return write_results(path, env, records)
