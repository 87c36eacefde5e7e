"""Fine-tuning modes: `full` trains every parameter; `lora` freezes the base model and trains
low-rank adapters (Hu et al. 2021) on the workload's `lora_targets`, injected with peft, the
field's library, so the adapters are the ones users train.

LoRA leaves the frozen weights without gradients, so the optimizer gets (and holds state for)
the adapters alone: `trainable_parameters(model)` is what goes to the optimizer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from torch import nn

from ..errors import InputError

__all__ = ["FINETUNE_MODES", "LoraSettings", "apply_finetune", "trainable_parameters", "parameter_counts"]

FINETUNE_MODES = ("full", "lora")


@dataclass(frozen=True)
class LoraSettings:
    rank: int = 16  # r: adapter width; 8-64 in the usual recipes
    alpha: float = 32.0  # scale alpha / r = 2, the common choice
    dropout: float = 0.0  # 0: the step is deterministic (bitwise resume on CPU)

    def describe(self, targets: tuple[str, ...]) -> dict[str, Any]:
        return {**asdict(self), "targets": list(targets)}


def check_mode(mode: str, workload) -> None:
    if mode not in FINETUNE_MODES:
        raise InputError(f"--finetune={mode}: unknown mode; known: {', '.join(FINETUNE_MODES)}")
    if mode == "lora" and not workload.lora_targets:
        raise InputError(f"--finetune=lora: workload {workload.name!r} has no LoRA targets; "
                         "LoRA runs on llama-1b (or a workload registered with lora_targets)")


def apply_finetune(model: nn.Module, mode: str, workload, lora: LoraSettings | None = None) -> nn.Module:
    """The model to train in `mode`; LoRA adapters are injected in place (peft), the base frozen."""
    check_mode(mode, workload)
    if mode == "full":
        return model
    from peft import LoraConfig, inject_adapter_in_model

    s = lora or LoraSettings()
    config = LoraConfig(r=s.rank, lora_alpha=s.alpha, lora_dropout=s.dropout,
                        target_modules=list(workload.lora_targets), bias="none")
    model = inject_adapter_in_model(config, model)
    for name, p in model.named_parameters():
        p.requires_grad_("lora_" in name)  # only the adapters learn (the tied embedding/head too stay frozen)
    return model


def trainable_parameters(model: nn.Module) -> list[nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def parameter_counts(model: nn.Module) -> dict[str, int]:
    """{'params': all (tied counted once), 'trainable_params': the ones with gradients}."""
    params = list(model.parameters())
    return {"params": sum(p.numel() for p in params),
            "trainable_params": sum(p.numel() for p in params if p.requires_grad)}
