"""One `Record` per benchmark: configuration + status + metrics + raw step times.

The field names are the results-file contract; other tools (report, compare,
gate, select) read them, so add fields, never rename them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

__all__ = ["Record", "KINDS", "STATUSES", "METRIC_KEYS"]

KINDS = ("training", "input", "resume", "collective", "ddp", "preflight", "memory", "harness", "convergence",
         "goodput", "fsdp")
STATUSES = ("passed", "failed", "skipped", "oom", "error")

# The metric keys with a fixed meaning; others may be added.
METRIC_KEYS = (
    "samples_per_s",  # measured samples / measured wall time (device synced at both ends)
    "tokens_per_s",  # text workloads: samples_per_s x tokens per sample
    "step_time_median_s",
    "step_time_p10_s",
    "step_time_p90_s",
    "stall_ratio",  # fraction of measured wall time the device waited for input
    "peak_mem_bytes",  # CUDA max_memory_allocated, or process RSS on CPU (see peak_mem_kind)
    "peak_mem_reserved_bytes",  # CUDA max_memory_reserved
    "mfu",  # model FLOPs/s / dense peak FLOPs/s at this precision; None when peak unknown
    "mfu_achievable",  # model FLOPs/s / this device's measured matmul peak at this precision (harness.peak)
    "model_flops_per_s",
    "gpu_util_mean",  # NVML utilization (percent), sampled over the measured window
    "energy_j_per_sample",
    "power_w_mean",
    "loss_first",
    "loss_last",
    "cost_per_epoch_usd",
)


@dataclass
class Record:
    test: str  # pytest node id (or "trainbench train ..." outside pytest)
    kind: str  # one of KINDS
    workload: str | None = None
    size: str | None = None
    precision: str | None = None
    batch_size: int | None = None  # per-rank micro-batch
    storage: str | None = None
    topology: str | None = None
    world_size: int = 1
    gpu: str | None = None  # the --gpu catalog profile the numbers belong to
    status: str = "passed"
    metrics: dict[str, Any] = field(default_factory=dict)
    step_times_s: list[float] = field(default_factory=list)
    # configuration that is not an axis of comparison (steps, warmup, workers, ...) and notes
    config: dict[str, Any] = field(default_factory=dict)
    message: str | None = None  # why it failed / was skipped, in words

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Record":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def key(self) -> tuple:
        """What makes two records the same benchmark (compare/gate match on it)."""
        return (
            self.kind,
            self.workload,
            self.size,
            self.precision,
            self.batch_size,
            self.storage,
            self.topology,
            self.world_size,
            self.gpu,
            self.test,
            self.config.get("op"),  # collective records: one per op and size in one test
            self.config.get("size_bytes"),
        )
