"""The repeated block of a model (transformer layer, ResNet bottleneck): the unit regional
compilation compiles once and activation checkpointing recomputes.

Found structurally, so user workloads need no annotation: the module class that appears most
often as a direct child of an `nn.ModuleList` / `nn.Sequential` (at least twice).
"""

from __future__ import annotations

from collections import Counter

from torch import nn

__all__ = ["repeated_blocks", "activation_checkpointing"]


def repeated_blocks(model: nn.Module) -> list[nn.Module]:
    """Instances of the model's repeated block class, in module order ([] when there is none)."""
    children = [c for m in model.modules() if isinstance(m, (nn.ModuleList, nn.Sequential)) for c in m.children()]
    counts = Counter(type(c) for c in children if any(True for _ in c.parameters()))
    if not counts:
        return []
    kind, n = counts.most_common(1)[0]
    return [c for c in children if type(c) is kind] if n >= 2 else []


def activation_checkpointing(model: nn.Module) -> int:
    """Recompute each repeated block's forward during backward instead of saving its
    activations (torch.utils.checkpoint, non-reentrant). Parameter names are unchanged.
    Returns how many blocks were wrapped."""
    from torch.utils.checkpoint import checkpoint

    blocks = repeated_blocks(model)
    for block in blocks:
        inner = block.forward

        def forward(*args, _inner=inner, **kwargs):
            return checkpoint(_inner, *args, use_reentrant=False, **kwargs)

        block.forward = forward
    return len(blocks)
