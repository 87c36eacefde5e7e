"""Which catalog profile the device this process runs on belongs to (`--gpu`)."""

from __future__ import annotations

import torch

from ..errors import DeviceMismatch
from .gpus import GpuSpec, detect_gpu, get_gpu
from .mig import mig_reason, mig_signals, mig_spec, parent_name

__all__ = ["resolve_profile"]


def _detected() -> tuple[str | None, int | None]:
    if not torch.cuda.is_available():
        return None, None
    props = torch.cuda.get_device_properties(0)
    return props.name, props.total_memory


def _refuse_unusable_gpu() -> None:
    """The driver sees GPUs that torch cannot use (a torch build newer than the driver's CUDA):
    stop rather than benchmark the CPU under a GPU machine's name."""
    from ..preflight.gpu_trap import driver_view, unusable_gpu_message

    message = unusable_gpu_message(torch.__version__, torch.version.cuda, False, driver_view())
    if message:
        raise DeviceMismatch(message)


def resolve_profile(requested: str) -> tuple[str, GpuSpec | None, torch.device]:
    """(profile label, catalog spec or None, device) for --gpu; refuses a contradiction.

    --gpu=cpu on a GPU machine runs on the CPU on purpose; any GPU profile must match the GPU
    that is present, or every number in the results would be mislabelled.
    """
    name, memory = _detected()
    if name is None and requested != "cpu":
        _refuse_unusable_gpu()
    found = detect_gpu(name, memory)
    if name is not None and found is not None:
        reason = mig_reason(found, memory, mig_signals(0))
        if reason:
            found = mig_spec(found, reason)
    found_label = found.name if found else f"unknown GPU {name!r}"
    if requested == "auto":
        if name is None:
            return "cpu", found, torch.device("cpu")
        return (found.name if found else name), found, torch.device("cuda:0")
    spec = get_gpu(requested)
    if spec.name == "cpu":
        return "cpu", spec, torch.device("cpu")
    if found is None or parent_name(found.name) != spec.name:
        what = "no CUDA GPU (CPU only)" if name is None else f"{name} (profile {found_label})"
        raise DeviceMismatch(
            f"--gpu={requested} was requested but the detected device is {what}; run on a "
            f"{requested} machine, or pass --gpu=auto (or the detected profile) so results are "
            f"not mislabelled"
        )
    return found.name, found, torch.device("cuda:0")  # a MIG slice keeps its own (peak-less) profile
