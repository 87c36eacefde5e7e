"""What a tuned training loop does on a GPU, as recorded settings (`RunConfig.tuning`):

- fused optimizers (Adam, AdamW, SGD: `fused=True`): one kernel per step instead of one per
  tensor, and with a GradScaler no separate unscale + inf check (the non-fused path syncs the
  host every step to read the inf flag);
- channels_last and `cudnn.benchmark` for convolutional models (tensor cores want NHWC; the
  autotuner picks the fastest conv algorithm for the fixed input shape).

`tuning="plain"` leaves the model and optimizer as the workload built them: the loop most people
write first, one option away (`--tuning=plain`). On a CPU nothing changes either way.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import nn

__all__ = ["TUNINGS", "fuse_optimizer", "tune"]

TUNINGS = ("tuned", "plain")
_FUSABLE = (torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD)


def fuse_optimizer(optimizer: torch.optim.Optimizer) -> torch.optim.Optimizer:
    """The same optimizer (type, groups, hyper-parameters) rebuilt with fused=True, so that its
    constructor validates the parameters and GradScaler sees a step that unscales itself; the
    original when it cannot be fused or already has state."""
    if type(optimizer) not in _FUSABLE or optimizer.state:
        return optimizer
    params = [p for g in optimizer.param_groups for p in g["params"]]
    if not params or not all(p.is_floating_point() for p in params):
        return optimizer
    groups = [{**g, "fused": True, "foreach": None} for g in optimizer.param_groups]
    accepted = inspect.signature(type(optimizer)).parameters  # defaults can hold keys the constructor fixes
    kwargs = {k: v for k, v in optimizer.defaults.items() if k in accepted}
    try:
        return type(optimizer)(groups, **{**kwargs, "fused": True, "foreach": None})
    except (RuntimeError, ValueError):  # a device or dtype this build has no fused kernel for
        return optimizer


def _convolutional(model: nn.Module) -> bool:
    return any(isinstance(m, nn.Conv2d) for m in model.modules())


def tune(model: nn.Module, optimizer: torch.optim.Optimizer, device: torch.device,
         tuning: str) -> tuple[nn.Module, torch.optim.Optimizer, dict[str, Any]]:
    """(model, optimizer, settings recorded with the benchmark)."""
    settings = {"tuning": tuning, "fused_optimizer": False, "channels_last": False, "cudnn_benchmark": False}
    if tuning == "plain" or device.type != "cuda":
        settings["fused_optimizer"] = bool(optimizer.defaults.get("fused"))
        return model, optimizer, settings
    optimizer = fuse_optimizer(optimizer)
    settings["fused_optimizer"] = bool(optimizer.defaults.get("fused"))
    if _convolutional(model):
        model = model.to(memory_format=torch.channels_last)  # in place for parameters: the optimizer's stay valid
        torch.backends.cudnn.benchmark = True
        settings["channels_last"] = settings["cudnn_benchmark"] = True
    return model, optimizer, settings
