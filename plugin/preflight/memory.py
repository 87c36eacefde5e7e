"""Memory item: the training-memory estimate for the workload, batch and precision vs the GPU.

The estimate and the advice come from `plugin.cost` (model state exactly + activations traced
with fake tensors; `check_fit` keeps headroom for backward buffers and the CUDA context).
`check_memory` is a pure function of the resulting `MemoryFit`, so tests fake any fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..catalog import GpuSpec
from ..cost.device_memory import DeviceMemory
from ..cost.fit import check_fit
from ..cost.memory import estimate_memory
from .check import FAIL, NA, PASS, WARN, Check

__all__ = ["MemoryFit", "check_memory", "estimate_fit"]


@dataclass(frozen=True)
class MemoryFit:
    gpu: str  # catalog profile compared against
    batch: int  # micro-batch per GPU
    needed_bytes: int | None  # the estimate at `batch`; None = unknown
    usable_bytes: float | None  # card memory less headroom; None = no device memory (CPU)
    largest_batch: int | None = None  # largest micro-batch that fits; None = unknown
    advice: tuple[str, ...] = field(default_factory=tuple)  # what to change when it does not fit
    method: str = ""  # how the estimate was made (shown with the verdict)


def _gb(n: float | None) -> str:
    if n is None:
        return "n/a"
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def check_memory(fit: MemoryFit | None, workload: str, precision: str) -> Check:
    name, group = "memory", "memory"
    if fit is None or fit.usable_bytes is None:
        return Check(name, group, NA, "no GPU memory to compare with (CPU run); on a GPU machine the estimate is "
                     "checked against the card", workload=workload)
    metrics = {"needed_bytes": fit.needed_bytes, "usable_bytes": fit.usable_bytes, "largest_batch": fit.largest_batch}
    what = f"{workload} at batch {fit.batch} ({precision})"
    if fit.needed_bytes is None:
        return Check(name, group, WARN, f"no memory estimate for {what}: {fit.method or 'unknown optimizer state'}",
                     "run a short training step and read the measured peak memory", workload=workload, metrics=metrics)
    line = (f"estimate {_gb(fit.needed_bytes)} for {what} vs {_gb(fit.usable_bytes)} usable on "
            f"{fit.gpu} [{fit.method}]")
    if fit.needed_bytes <= fit.usable_bytes:
        room = f"; largest batch that fits about {fit.largest_batch}" if fit.largest_batch else ""
        return Check(name, group, PASS, line + room, workload=workload, metrics=metrics)
    fix = "; ".join(fit.advice) or (
        f"lower --batch-size (largest that fits about {fit.largest_batch}) and use --grad-accum for the same "
        f"effective batch; --precision=bf16/fp16; activation checkpointing")
    return Check(name, group, FAIL, line + ": it does not fit", fix, workload=workload, metrics=metrics)


def estimate_fit(workload, size: str, precision: str, batch: int, spec: GpuSpec | None,
                 measured: DeviceMemory | None = None) -> MemoryFit | None:
    """The fit of `workload` on `spec`, against the free memory `measured` on this machine where
    given (None when neither the profile nor a measurement gives a memory size)."""
    if spec is None or (spec.memory_bytes is None and measured is None):
        return None
    est = estimate_memory(workload, size, precision)
    amp = None
    if precision in ("fp32", "tf32"):  # the advice then says what AMP would change
        amp = estimate_memory(workload, size, "bf16" if spec.peak_tflops.get("bf16") else "fp16")
    fit = check_fit(est, spec, batch, amp, measured)
    where = (f"; usable from {measured.free_bytes / 1e9:.1f} GB free of {measured.total_bytes / 1e9:.1f} GB "
             f"measured on {measured.device} (torch.cuda.mem_get_info)" if measured else "; usable from the catalog size")
    return MemoryFit(spec.name, batch, fit.needed_bytes, fit.usable_bytes, fit.largest_batch, tuple(fit.advice),
                     "memory estimate: " + "; ".join(est.notes) + where)
