"""The `trainbench` fixture: runs a workload through the harness for the current test and turns
what was measured into a `Record` (and pytest-benchmark stats)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Callable

import pytest
import torch

from .benchmark_bridge import feed_benchmark
from ..harness.oom import is_oom, release_device_memory
from ..harness.peak import MatmulPeak, probe_peak
from ..harness.precision import UnsupportedPrecision, get_precision
from ..harness.run import RunConfig, RunOutput, run
from ..records.record import Record
from .session import BenchSession
from ..workloads import get_workload

__all__ = ["Bench"]


class Bench:
    def __init__(self, session: BenchSession, nodeid: str, get_benchmark: Callable[[], Any] | None = None):
        self.session = session
        self.nodeid = nodeid
        self._get_benchmark = get_benchmark  # pytest-benchmark's fixture, requested on first train()
        self._benchmark: Any = None

    @property
    def benchmark(self) -> Any:
        if self._benchmark is None and self._get_benchmark is not None:
            self._benchmark = self._get_benchmark()
        return self._benchmark

    def config(self, workload: str, **overrides: Any) -> RunConfig:
        """The run configuration for `workload`, session options filled in."""
        s = self.session
        base = dict(
            workload=workload, size=s.size, batch_size=s.batch_size, steps=s.steps, warmup=s.warmup,
            min_warmup_s=s.min_warmup_s, min_window_s=s.min_window_s,
            grad_accum=s.grad_accum, seed=s.seed, device=str(s.device), weights=s.weights, **s.loader,
            activation_checkpointing=s.activation_checkpointing, tuning=s.tuning,
        )
        base.update({k: v for k, v in overrides.items() if v is not None})
        return RunConfig(**base)

    def achievable_peak(self, precision: str) -> MatmulPeak:
        """This device's measured matmul peak at `precision`, probed on first use in the session
        (between benchmarks, never inside a window) and kept for every later record."""
        peaks = self.session.matmul_peaks
        if precision not in peaks:
            peaks[precision] = probe_peak(self.session.device, precision, seed=self.session.seed)
        return peaks[precision]

    def _benchmark_unused(self) -> None:
        if self.benchmark is not None:
            self.benchmark.skipped = True  # no timing for this test: not a misuse of the fixture

    def record(self, **fields: Any) -> Record:
        """Add a record for this test (kinds other than training use this directly)."""
        fields.setdefault("test", self.nodeid)
        return self.session.add(Record(**fields))

    def train(self, workload: str, *, precision: str = "fp32", kind: str = "training",
              loader: Any = None, feed_benchmark_stats: bool = True, **overrides: Any) -> Record:
        """Measure one training benchmark; returns its Record (status passed, skipped or oom)."""
        cfg = self.config(workload, precision=precision, **overrides)
        wl = get_workload(workload)
        if cfg.finetune == "lora" and not wl.lora_targets:
            self._benchmark_unused()
            pytest.skip(f"--finetune=lora: {workload} has no LoRA targets (llama-1b has)")
        batch = cfg.batch_size or wl.default_batch_size(cfg.size)
        common = dict(kind=kind, workload=workload, size=cfg.size, precision=precision, batch_size=batch,
                      storage=cfg.storage.text, world_size=1, config=_config_json(cfg))
        self.session.pending = dict(common)  # what an interruption record says was running
        oom_message = None
        try:
            achievable = self.achievable_peak(precision)
            out = run(cfg, gpu=self.session.spec, loader=loader, achievable_peak_flops_per_s=achievable.flops_per_s)
        except UnsupportedPrecision as exc:
            self._benchmark_unused()
            self.record(status="skipped", message=str(exc), **common)
            pytest.skip(str(exc))
        except RuntimeError as exc:  # torch.OutOfMemoryError and the allocation failures it misses
            if not is_oom(exc):
                raise
            oom_message = str(exc).splitlines()[0] if str(exc) else "out of memory"
        if oom_message is not None:  # outside the except block: the traceback no longer holds the model
            release_device_memory()
            self._benchmark_unused()
            msg = (f"out of memory at batch {batch} ({precision}): try --precision=bf16/fp16, a smaller "
                   f"--batch-size with --grad-accum, or activation checkpointing ({oom_message})")
            self.record(status="oom", message=msg, **common)
            pytest.xfail(msg)
        rec = self.record(metrics=out.metrics, step_times_s=out.measurement.step_times_s, **common)
        rec.config.update(_measurement_config(out))
        rec.config["achievable_peak"] = {"precision": achievable.precision, "shape": list(achievable.shape),
                                         "method": achievable.method}
        rec.config.update(out.modes)  # finetune, trainable_params, lora, compile graphs/breaks
        if feed_benchmark_stats:
            feed_benchmark(self.benchmark, out.measurement.step_times_s,
                           {**rec.metrics, "workload": workload, "precision": precision, "size": cfg.size,
                            "batch_size": batch, "storage": cfg.storage.text, "gpu": rec.gpu})
        return rec


def _config_json(cfg: RunConfig) -> dict[str, Any]:
    return {k: v for k, v in asdict(cfg).items() if k not in ("workload", "size", "precision", "batch_size", "storage")}


def _measurement_config(out: RunOutput) -> dict[str, Any]:
    m = out.measurement
    return {
        "peak_mem_kind": m.peak_mem_kind,
        "device": str(out.device),
        "losses": m.losses,
        "input_wait_s": m.input_wait_s,
        "telemetry": m.telemetry,
        "warmup_steps": m.warmup_steps,  # steps and seconds the warm-up took (floors: min_warmup_s)
        "warmup_s": m.warmup_s,
        "measured_steps": len(m.step_times_s),
        "window_s": m.wall_s,  # the measured window's actual length (floor: min_window_s)
    }
