"""Does a workload fit on a GPU at a batch size, the largest batch that does, and what to
change when it does not (AMP, gradient accumulation, activation checkpointing, sharding); and
which training modes fit (full or LoRA fine-tuning, each with or without activation
checkpointing, and full fine-tuning sharded with FSDP over k cards).

Usable memory = catalog memory x (1 - HEADROOM) - CUDA_CONTEXT, or on the machine itself the
free memory `torch.cuda.mem_get_info` reports x (1 - HEADROOM) when smaller: the estimate leaves out the
transient buffers of backward, allocator fragmentation and the CUDA context, so a stated slice
of the card is kept back for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping

from ..catalog.gpus import GpuSpec
from .device_memory import DeviceMemory
from .memory import MemoryEstimate, estimate_memory

__all__ = ["HEADROOM", "CUDA_CONTEXT_BYTES", "Fit", "usable_bytes", "check_fit",
           "ModeFit", "mode_estimates", "fit_modes", "modes_cell", "fsdp_ranks_needed", "mode_facts", "mode_advice"]

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


# ---- which training modes fit ---------------------------------------------------------------

# (finetune, activation checkpointing) in the order a user would try them
MODES = (("full", False), ("full", True), ("lora", False), ("lora", True))
MAX_FSDP_RANKS = 64


def mode_label(finetune: str, checkpointing: bool) -> str:
    return ("LoRA" if finetune == "lora" else "full") + (" + act. ckpt" if checkpointing else "")


@dataclass(frozen=True)
class ModeFit:
    label: str  # "full", "full + act. ckpt", "LoRA", "LoRA + act. ckpt"
    needed_bytes: int | None  # estimate at the batch on one card
    fits: bool | None
    fsdp_ranks: int | None = None  # full-shard FSDP: fewest cards of this GPU that hold it (1: no need)
    state_bytes: int | None = None  # weights + grads + optimizer state
    state_note: str = ""  # e.g. "AdamW, 16 bytes/param"


@lru_cache(maxsize=32)
def _estimate(name: str, size: str, precision: str, finetune: str, checkpointing: bool) -> MemoryEstimate:
    from ..workloads import get_workload

    return estimate_memory(get_workload(name), size, precision, finetune=finetune,
                           activation_checkpointing=checkpointing)


def mode_estimates(workload, size: str, precision: str) -> dict[str, MemoryEstimate]:
    """label -> estimate for each mode the workload has (LoRA only with lora_targets)."""
    modes = [m for m in MODES if m[0] == "full" or workload.lora_targets]
    return {mode_label(*m): _estimate(workload.name, size, precision, *m) for m in modes}


def fsdp_ranks_needed(est: MemoryEstimate, usable: float, batch: int) -> int | None:
    """Fewest ranks k with state/k + activations(batch) <= usable under full sharding (FSDP2 /
    ZeRO-3: weights, grads and optimizer state split k ways; activations per rank unsharded;
    the all-gathered layer in flight is within the headroom). None: not even MAX_FSDP_RANKS."""
    state = est.state_bytes
    if state is None:
        return None
    room = usable - est.activation_bytes(batch)
    if room <= 0:
        return None
    k = max(1, -(-int(state) // int(room)))
    return k if k <= MAX_FSDP_RANKS else None


def fit_modes(estimates: Mapping[str, MemoryEstimate], gpu: GpuSpec, batch: int) -> list[ModeFit]:
    usable = usable_bytes(gpu)
    out = []
    for label, est in estimates.items():
        need = est.total_bytes(batch)
        fits = None if usable is None or need is None else need <= usable
        ranks = fsdp_ranks_needed(est, usable, batch) if usable is not None else None
        out.append(ModeFit(label, need, fits, ranks, est.state_bytes, _state_note(est)))
    return out


def modes_cell(fits: list[ModeFit]) -> str:
    """The select-table cell: the modes that fit one card, and FSDP for full fine-tuning."""
    if not fits or all(f.fits is None for f in fits):
        return "n/a"
    ok = [f.label for f in fits if f.fits]
    if len(ok) == len(fits) and len(fits) > 1:
        return "all (" + ", ".join(ok) + ")" if len(fits) < 4 else "all: full, LoRA, each +/- act. ckpt"
    full = next((f for f in fits if f.label == "full"), None)
    if full is not None and not full.fits and full.fsdp_ranks:
        ok.append(f"full on FSDP x{full.fsdp_ranks}")
    return ", ".join(ok) or "none"


def _state_note(est: MemoryEstimate) -> str:
    if est.state_bytes is None or not est.params:
        return est.optimizer
    return f"{est.optimizer}, {est.state_bytes / est.params:.3g} bytes per trainable param"


def mode_facts(estimates: Mapping[str, MemoryEstimate], batch: int) -> list[str]:
    """One line per mode: what its model state and activations take (an estimate)."""
    lines = []
    for label, est in estimates.items():
        if est.state_bytes is None:
            continue
        all_params = est.param_bytes // 4 if est.param_bytes else 0
        per = est.state_bytes / max(1, all_params) if label == "full" else None
        lines.append(
            f"{label}: weights {_gb(est.param_bytes)} + grads {_gb(est.grad_bytes)} + {est.optimizer} "
            f"{_gb(est.optimizer_bytes or 0)} = {_gb(est.state_bytes)}"
            + (f" ({per:.0f} bytes/param, fp32 master weights)" if per else "")
            + f", {est.params:,} trainable; + activations {_gb(est.activation_bytes(batch))} at batch {batch}"
            f" = {_gb(est.total_bytes(batch))} (estimate)"
        )
    return lines


def mode_advice(fits: list[ModeFit], gpu: GpuSpec) -> str | None:
    """For a card where full fine-tuning does not fit: which mode is the fix."""
    full = next((f for f in fits if f.label == "full"), None)
    usable = usable_bytes(gpu)
    if full is None or full.fits is not False or usable is None:
        return None
    fixes = [f"{f.label} ({_gb(f.needed_bytes)})" for f in fits if f.fits]
    if full.fsdp_ranks:
        fixes.append(f"FSDP full-shard over >= {full.fsdp_ranks} {gpu.name} cards")
    why = ""
    if full.state_bytes is not None and full.state_bytes > usable:
        why = f"; its model state alone is {_gb(full.state_bytes)} ({full.state_note})"
    return (f"full fine-tuning needs {_gb(full.needed_bytes)} (estimate){why}, more than the {_gb(usable)} usable "
            f"of one {gpu.name}; fits with: " + ("; ".join(fixes) if fixes else "none of LoRA / activation "
                                               "checkpointing / FSDP here: pick a larger card"))
