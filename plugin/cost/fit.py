"""Does a workload fit on a GPU at a batch size, the largest batch that does, and what to
change when it does not (AMP, gradient accumulation, activation checkpointing, sharding).

Usable memory = catalog memory x (1 - HEADROOM) - CUDA_CONTEXT, or on the machine itself the
free memory `torch.cuda.mem_get_info` reports x (1 - HEADROOM) when smaller: the estimate leaves out the
transient buffers of backward, allocator fragmentation and the CUDA context, so a stated slice
of the card is kept back for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..catalog.gpus import GpuSpec
from .device_memory import DeviceMemory
from .memory import MemoryEstimate

__all__ = ["HEADROOM", "CUDA_CONTEXT_BYTES", "Fit", "usable_bytes", "check_fit"]

HEADROOM = 0.10  # of the card: activation gradients during backward, fragmentation
CUDA_CONTEXT_BYTES = 0.5e9  # CUDA context + cuBLAS/cuDNN workspaces, outside the allocator's count
RECOMPUTE_COST = 1.0 / 3.0  # activation checkpointing reruns the forward: +1 fwd on 3 fwd-equivalents


@dataclass(frozen=True)
class Fit:
    gpu: str
    batch: int
    needed_bytes: int | None  # estimate at `batch`; None when the optimizer state is unknown
    usable_bytes: float | None  # None when the catalog has no memory size (cpu)
    fits: bool | None  # None: unknown
    largest_batch: int | None  # 0: not even one sample; None: unknown
    advice: tuple[str, ...] = field(default_factory=tuple)


def usable_bytes(gpu: GpuSpec, measured: DeviceMemory | None = None) -> float | None:
    """Catalog memory less headroom and context; with a measurement of the machine, its free
    memory less the headroom share of it (the context is already counted out), whichever is smaller."""
    catalog = None if gpu.memory_bytes is None else gpu.memory_bytes * (1.0 - HEADROOM) - CUDA_CONTEXT_BYTES
    if measured is None:
        return catalog
    free = measured.free_bytes * (1.0 - HEADROOM)
    return free if catalog is None else min(free, catalog)


def _gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB"


def check_fit(est: MemoryEstimate, gpu: GpuSpec, batch: int, amp_est: MemoryEstimate | None = None,
              measured: DeviceMemory | None = None) -> Fit:
    """Fit of `est` at `batch` on `gpu`; `amp_est` (same workload under AMP) sharpens the advice;
    `measured` is the free memory of the device the run is on (None: the catalog's size)."""
    usable, needed = usable_bytes(gpu, measured), est.total_bytes(batch)
    if usable is None or needed is None:
        return Fit(gpu.name, batch, needed, usable, None, None)
    largest = est.largest_batch(usable)
    fits = needed <= usable
    advice: list[str] = []
    state = est.state_bytes or 0
    if state + est.activation_fixed_bytes > usable:
        advice.append(
            f"model state alone (weights+grads+optimizer {_gb(state)}) exceeds the {_gb(usable)} usable: "
            f"shard it across GPUs (FSDP / ZeRO) or pick a GPU with more memory"
        )
    elif not fits:
        if largest:
            steps = -(-batch // largest)
            advice.append(
                f"gradient accumulation: micro-batch {largest} x {steps} steps keeps the effective batch {batch}"
            )
        if amp_est is not None and est.precision not in ("bf16", "fp16"):
            amp_largest = amp_est.largest_batch(usable)
            dtype = "bf16" if gpu.peak_tflops.get("bf16") else "fp16 (+GradScaler)"
            advice.append(
                f"AMP {dtype}: activations {_gb(est.activation_per_sample_bytes)} -> "
                f"{_gb(amp_est.activation_per_sample_bytes)} per sample, largest batch {amp_largest}"
            )
        advice.append(
            f"activation checkpointing (torch.utils.checkpoint per block): frees most of the "
            f"{_gb(est.activation_bytes(batch))} of activations for about +{RECOMPUTE_COST:.0%} compute"
        )
    return Fit(gpu.name, batch, needed, usable, fits, largest, tuple(advice))
