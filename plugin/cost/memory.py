"""Training-memory estimate: model state (exact) + activations saved for backward (traced).

    total(batch) = weights + grads + optimizer state          (exact, from shapes and optimizer)
                 + activations_fixed + batch x activations_per_sample   (saved for backward)

- Weights: every parameter, trainable or frozen, in its own dtype. Grads and optimizer state:
  trainable parameters only, so LoRA's frozen base costs its weights and nothing else (AMP
  keeps fp32 master weights and fp32 grads; autocast's half copies of the weights are saved
  for backward and so show up in `activation_fixed_bytes`).
- Optimizer state, per parameter: SGD with momentum one buffer (none without momentum);
  Adam/AdamW `exp_avg` + `exp_avg_sq` (+ `max_exp_avg_sq` with amsgrad) and a 4-byte fp32
  `step` tensor. Other optimizers: unknown (None), never a guess.
- Activations: the tensors autograd saves for backward, counted with
  `torch.autograd.graph.saved_tensors_hooks` on one forward + loss run under `FakeTensorMode`
  (shapes only: no memory, no FLOPs, so the full presets cost nothing), at two batch sizes to
  split the batch-independent part from the per-sample part. Tensors sharing a storage count
  once; parameters and buffers are not activations. The fake device is the CPU unless a GPU
  is present (`trace_device`): kernel choices that change what is saved (SDPA's flash path
  keeps only the output and log-sum-exp) then follow that device. Precision: AMP precisions
  run the trace under `torch.autocast`, so saved tensors carry the dtypes autocast gives them.

Why a trace rather than hand-written per-layer formulas (e.g. Korthikanti et al. 2022's
34·s·b·h per transformer layer): the formulas describe one implementation and go stale
silently; the trace follows the code that actually runs. It is still shape arithmetic, checked
in tests against the bytes saved by a real CPU run.

Not included: transient buffers during backward (activation gradients, workspace), allocator
fragmentation and the CUDA context; `fit()` keeps a stated headroom for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import torch
from torch import nn
from torch.utils.data import default_collate

__all__ = [
    "AMP_DTYPES",
    "MemoryEstimate",
    "state_bytes",
    "optimizer_state_bytes",
    "saved_activation_bytes",
    "estimate_memory",
]

# precision name -> autocast dtype; fp32/tf32 run without autocast
AMP_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
_STEP_BYTES = 4  # Adam's per-parameter `step` counter: a float32 scalar tensor


@dataclass(frozen=True)
class MemoryEstimate:
    workload: str
    size: str
    precision: str
    params: int  # trainable parameter count
    param_bytes: int  # all weights, frozen ones included
    grad_bytes: int
    optimizer_bytes: int | None  # None: optimizer state layout unknown
    optimizer: str  # e.g. "AdamW (2 buffers/param + step)"
    activation_fixed_bytes: int  # saved for backward, independent of batch (AMP weight copies, masks)
    activation_per_sample_bytes: int  # saved for backward, per sample
    notes: tuple[str, ...] = field(default_factory=tuple)
    # parameters that do not train (a frozen base under LoRA): held and read, but no grads or state
    frozen_param_bytes: int = 0
    finetune: str = "full"  # full | lora
    activation_checkpointing: bool = False

    @property
    def state_bytes(self) -> int | None:
        """Weights + grads + optimizer state (exact); None when the optimizer is unknown."""
        if self.optimizer_bytes is None:
            return None
        return self.param_bytes + self.grad_bytes + self.optimizer_bytes

    def activation_bytes(self, batch: int) -> int:
        return self.activation_fixed_bytes + batch * self.activation_per_sample_bytes

    def total_bytes(self, batch: int) -> int | None:
        state = self.state_bytes
        return None if state is None else state + self.activation_bytes(batch)

    def largest_batch(self, capacity_bytes: float) -> int | None:
        """Largest batch whose estimate fits in `capacity_bytes` (0: not even one sample)."""
        state = self.state_bytes
        if state is None:
            return None
        room = capacity_bytes - state - self.activation_fixed_bytes
        if room < self.activation_per_sample_bytes:
            return 0
        if self.activation_per_sample_bytes <= 0:
            return None  # unbounded by this estimate
        return int(room // self.activation_per_sample_bytes)


def _numel_bytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> tuple[int | None, str]:
    """Bytes of the state `optimizer` will hold for its parameters after its first step."""
    per_param: Callable[[torch.Tensor, Mapping[str, Any]], int]
    if isinstance(optimizer, torch.optim.SGD):
        def per_param(p, group):
            return _numel_bytes(p) if group.get("momentum", 0) else 0

        momentum = any(g.get("momentum", 0) for g in optimizer.param_groups)
        desc = "SGD (1 momentum buffer/param)" if momentum else "SGD (no state)"
    elif isinstance(optimizer, (torch.optim.Adam, torch.optim.AdamW)):
        def per_param(p, group):
            buffers = 3 if group.get("amsgrad", False) else 2
            return buffers * _numel_bytes(p) + _STEP_BYTES

        desc = f"{type(optimizer).__name__} (2 buffers/param + step)"
    else:
        return None, f"{type(optimizer).__name__} (state layout unknown)"
    total = sum(per_param(p, g) for g in optimizer.param_groups for p in g["params"] if p.requires_grad)
    return total, desc


def state_bytes(model: nn.Module, optimizer: torch.optim.Optimizer) -> tuple[int, int, int | None, str]:
    """(param_bytes, grad_bytes, optimizer_bytes, optimizer description); shared params once.
    Weights count every parameter; gradients only the trainable ones (frozen: no .grad)."""
    params = list({id(p): p for p in model.parameters()}.values())
    param_bytes = sum(_numel_bytes(p) for p in params)
    grad_bytes = sum(_numel_bytes(p) for p in params if p.requires_grad)
    opt_bytes, desc = optimizer_state_bytes(optimizer)
    return param_bytes, grad_bytes, opt_bytes, desc


def _storage_key(t: torch.Tensor) -> int:
    # Identity of the underlying StorageImpl: views share it; fake tensors have no data_ptr.
    return t.untyped_storage()._cdata


def saved_activation_bytes(
    model: nn.Module,
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    batch: Any,
    precision: str = "fp32",
    device_type: str = "cpu",
) -> int:
    """Bytes of the distinct storages autograd saves for backward in one forward + loss.

    Works on real tensors (the check used in tests) and on fake ones (the estimate).
    Parameter and buffer storages are excluded: they are model state, not activations.
    """
    exclude = {_storage_key(t) for t in list(model.parameters()) + list(model.buffers())}
    seen: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        key = _storage_key(t)
        if key not in exclude and key not in seen:
            seen[key] = t.untyped_storage().nbytes()
        return t

    amp = AMP_DTYPES.get(precision)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast(device_type, dtype=amp or torch.bfloat16, enabled=amp is not None):
            loss_fn(model, batch)
    return sum(seen.values())


def _batch(workload, size: str, n: int) -> Any:
    data = workload.dataset(size, n, 0)
    return default_collate([data[i] for i in range(n)])


def estimate_memory(workload, size: str, precision: str = "fp32", trace_device: str | None = None,
                    finetune: str = "full", activation_checkpointing: bool = False) -> MemoryEstimate:
    """Analytic/traced training-memory estimate of `workload` at `size` and `precision`, in a
    fine-tuning mode (full / lora) and with or without activation checkpointing."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from ..harness.blocks import activation_checkpointing as checkpoint_blocks
    from ..harness.finetune import apply_finetune, trainable_parameters

    device = trace_device or ("cuda" if torch.cuda.is_available() else "cpu")
    b1, b2 = 2, 4  # two batch sizes (>1: BatchNorm refuses one value per channel)
    real = {b: _batch(workload, size, b) for b in (b1, b2)}
    mode = FakeTensorMode(allow_non_fake_inputs=True)  # module-level constants (e.g. ImageNet mean) stay real
    with mode, torch.device(device):
        model = workload.model(size)
        if activation_checkpointing:
            checkpoint_blocks(model)
        model = _fake_safe(apply_finetune, model, finetune, workload)
        model.train()
        optimizer = workload.optimizer(trainable_parameters(model), size)
        params, grads, opt, desc = state_bytes(model, optimizer)
        count = sum(p.numel() for p in {id(p): p for p in model.parameters() if p.requires_grad}.values())
        frozen = sum(_numel_bytes(p) for p in {id(p): p for p in model.parameters() if not p.requires_grad}.values())

    def fake(b):
        return _to_fake(real[b], mode, device)

    with mode:
        s1 = saved_activation_bytes(model, workload.loss, fake(b1), precision, device)
        s2 = saved_activation_bytes(model, workload.loss, fake(b2), precision, device)
    per_sample = max(0, round((s2 - s1) / (b2 - b1)))
    fixed = max(0, s1 - b1 * per_sample)
    notes = [f"activations traced with fake tensors on {device}"]
    if device == "cpu":
        notes.append("traced on CPU: GPU kernels may save slightly different tensors")
    return MemoryEstimate(
        workload=workload.name, size=size, precision=precision, params=count,
        param_bytes=params, grad_bytes=grads, optimizer_bytes=opt, optimizer=desc,
        activation_fixed_bytes=fixed, activation_per_sample_bytes=per_sample, notes=tuple(notes),
        frozen_param_bytes=frozen,
        finetune=finetune, activation_checkpointing=activation_checkpointing,
    )


def _fake_safe(fn, *args):
    """peft moves each new adapter to its base layer's device with `Module.to()`, and fake
    parameters are always moved by an in-place swap, which torch refuses for them. Inside the
    trace every tensor is created on the trace device already, so `Module.to` is a no-op
    while `fn` runs (restored after)."""
    move = nn.Module.to
    nn.Module.to = lambda self, *a, **k: self
    try:
        return fn(*args)
    finally:
        nn.Module.to = move


def _to_fake(batch: Any, mode, device: str) -> Any:
    if isinstance(batch, torch.Tensor):
        return mode.from_tensor(batch.to(device) if device == "cpu" else batch).to(device)
    if isinstance(batch, Mapping):
        return {k: _to_fake(v, mode, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(_to_fake(v, mode, device) for v in batch)
    return batch
