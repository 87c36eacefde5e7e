"""Memory item: the training-memory estimate for the workload, batch and precision vs the GPU.

The estimate comes from `plugin.cost` (model state exactly + activations traced with fake
tensors, and `check_fit`'s headroom and advice) when that package is installed; without it a
fallback counts the model state only (weights + gradients + optimizer state, from shapes on
the meta device) and says it is a lower bound. `check_memory` is a pure function of the
resulting `MemoryFit`, so tests fake any fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from plugin.catalog import GpuSpec
from plugin.preflight.check import FAIL, NA, PASS, WARN, Check

__all__ = ["MemoryFit", "check_memory", "estimate_fit", "HEADROOM", "CUDA_CONTEXT_BYTES"]

# The same allowances as plugin.cost.fit, used by the fallback: transient backward buffers and
# fragmentation (10 % of the card) and the CUDA context + library workspaces (0.5 GB).
HEADROOM = 0.10
CUDA_CONTEXT_BYTES = 0.5e9


@dataclass(frozen=True)
class MemoryFit:
    gpu: str  # catalog profile compared against
    batch: int  # micro-batch per GPU
    needed_bytes: int | None  # the estimate at `batch`; None = unknown
    usable_bytes: float | None  # card memory less headroom; None = no device memory (CPU)
    largest_batch: int | None = None  # largest micro-batch that fits; None = unknown
    advice: tuple[str, ...] = field(default_factory=tuple)  # what to change when it does not fit
    method: str = ""  # how the estimate was made (shown with the verdict)
    lower_bound: bool = False  # activations not included


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
    bound = " (model state only: a lower bound)" if fit.lower_bound else ""
    line = (f"estimate {_gb(fit.needed_bytes)}{bound} for {what} vs {_gb(fit.usable_bytes)} usable on "
            f"{fit.gpu} [{fit.method}]")
    if fit.needed_bytes <= fit.usable_bytes:
        room = f"; largest batch that fits about {fit.largest_batch}" if fit.largest_batch else ""
        return Check(name, group, PASS, line + room, workload=workload, metrics=metrics)
    fix = "; ".join(fit.advice) or (
        f"lower --batch-size (largest that fits about {fit.largest_batch}) and use --grad-accum for the same "
        f"effective batch; --precision=bf16/fp16; activation checkpointing")
    return Check(name, group, FAIL, line + ": it does not fit", fix, workload=workload, metrics=metrics)


def _usable(spec: GpuSpec) -> float | None:
    return None if spec.memory_bytes is None else spec.memory_bytes * (1 - HEADROOM) - CUDA_CONTEXT_BYTES


def _optimizer_slots(optimizer: torch.optim.Optimizer) -> int | None:
    """fp32 buffers per parameter in the optimizer state (None = unknown layout)."""
    if isinstance(optimizer, torch.optim.SGD):
        return 1 if any(g.get("momentum", 0) for g in optimizer.param_groups) else 0
    if isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW)):
        return 3 if any(g.get("amsgrad", False) for g in optimizer.param_groups) else 2
    return None


def _state_lower_bound(workload, size: str, batch: int, spec: GpuSpec) -> MemoryFit:
    with torch.device("meta"):  # shapes only: a 124M-parameter model costs nothing
        model = workload.model(size)
        optimizer = workload.optimizer(model.parameters(), size)
    params = {id(p): p for p in model.parameters() if p.requires_grad}.values()
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    slots = _optimizer_slots(optimizer)
    needed = None if slots is None else param_bytes * (2 + slots)  # weights + grads + optimizer buffers
    return MemoryFit(spec.name, batch, needed, _usable(spec), None, (),
                     "fallback: weights + grads + optimizer state; plugin.cost not installed", lower_bound=True)


def estimate_fit(workload, size: str, precision: str, batch: int, spec: GpuSpec | None) -> MemoryFit | None:
    """The fit of `workload` on `spec` (None when there is no GPU profile with a memory size)."""
    if spec is None or spec.memory_bytes is None:
        return None
    try:
        from plugin.cost.fit import check_fit
        from plugin.cost.memory import estimate_memory
    except ModuleNotFoundError as exc:
        if exc.name not in ("plugin.cost", "plugin.cost.fit", "plugin.cost.memory"):
            raise  # plugin.cost is there but broken: say so rather than quietly estimate less
        return _state_lower_bound(workload, size, batch, spec)
    est = estimate_memory(workload, size, precision)
    amp = None
    if precision in ("fp32", "tf32"):
        amp = estimate_memory(workload, size, "bf16" if spec.peak_tflops.get("bf16") else "fp16")
    fit = check_fit(est, spec, batch, amp)
    method = "plugin.cost: state exact + activations traced; " + "; ".join(est.notes)
    return MemoryFit(spec.name, batch, fit.needed_bytes, fit.usable_bytes, fit.largest_batch, tuple(fit.advice), method)
