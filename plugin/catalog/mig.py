"""A MIG slice is not the GPU whose name it reports.

Under Multi-Instance GPU, torch's device is one GPU instance: a fraction of the SMs and memory,
yet `get_device_name()` prints the parent's name ("NVIDIA H200"). A whole GPU's peak FLOPs, MFU
and price would then be wrong by the slice's fraction, so a slice gets a profile of its own with
every peak unknown and the reason in `source` (MFU and cost print n/a with it).

Signals, any one enough: the device's NVML UUID starts with `MIG-` (CUDA_VISIBLE_DEVICES may name
it so too), the parent reports MIG mode on, or the memory is far below the catalog's.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from .gpus import GpuSpec

__all__ = ["MigSignals", "mig_reason", "mig_spec", "mig_signals", "MIG_SUFFIX", "parent_name"]

MIG_SUFFIX = "-mig"
# below this fraction of the catalog's memory the device cannot be the whole part (the largest
# slice, 7g, keeps nearly all of it and is caught by the UUID / MIG mode instead)
_MEMORY_FRACTION = 0.6


@dataclass(frozen=True)
class MigSignals:
    nvml_uuid: str | None = None  # NVML's UUID of torch's device: "GPU-..." or "MIG-..."
    mig_mode: bool | None = None  # nvmlDeviceGetMigMode current mode of the parent; None = unknown
    visible_devices: str | None = None  # $CUDA_VISIBLE_DEVICES


def mig_reason(spec: GpuSpec, memory_bytes: int | None, s: MigSignals) -> str | None:
    """Why the device is a MIG slice of `spec`'s GPU; None when it looks like the whole GPU."""
    if s.nvml_uuid and s.nvml_uuid.upper().startswith("MIG-"):
        return f"a MIG slice of {spec.name} (device UUID {s.nvml_uuid})"
    if s.visible_devices and any(d.strip().upper().startswith("MIG-") for d in s.visible_devices.split(",")):
        return f"a MIG slice of {spec.name} (CUDA_VISIBLE_DEVICES={s.visible_devices})"
    if s.mig_mode:
        return f"a MIG slice of {spec.name} (the GPU is in MIG mode: CUDA sees its instances only)"
    if memory_bytes and spec.memory_bytes and memory_bytes < _MEMORY_FRACTION * spec.memory_bytes:
        return (f"likely a MIG slice of {spec.name}: {memory_bytes / 1e9:.0f} GB of memory against the "
                f"whole GPU's {spec.memory_gb:g} GB")
    return None


def mig_spec(parent: GpuSpec, reason: str) -> GpuSpec:
    """The slice's profile: the parent's name + `-mig`, no peaks, the reason as its source."""
    return dataclasses.replace(
        parent, name=parent.name + MIG_SUFFIX, memory_gb=None, mem_bw_gbps=None,
        peak_tflops=dict.fromkeys(parent.peak_tflops), nvlink_gbps=None, tdp_w=None, verified="n/a",
        source=f"{reason}: a slice has a fraction of the SMs, so peak, MFU and cost are n/a",
    )


def parent_name(profile: str) -> str:
    return profile.removesuffix(MIG_SUFFIX)


def mig_signals(device_index: int = 0) -> MigSignals:
    """Look at the machine (NVML); every field None where it cannot be told."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    try:
        import pynvml
        import torch

        pynvml.nvmlInit()
    except Exception:
        return MigSignals(visible_devices=visible)
    try:
        uuid = str(torch.cuda.get_device_properties(device_index).uuid).removeprefix("GPU-").removeprefix("MIG-")
        for prefix in ("MIG-", "GPU-"):
            try:
                h = pynvml.nvmlDeviceGetHandleByUUID(prefix + uuid)
            except Exception:
                continue
            mode = None
            if prefix == "GPU-":
                try:
                    mode = bool(pynvml.nvmlDeviceGetMigMode(h)[0])  # (current, pending)
                except Exception:  # NVMLError_NotSupported: a GPU without MIG
                    mode = False
            return MigSignals(prefix + uuid, mode, visible)
        return MigSignals(None, None, visible)
    except Exception:
        return MigSignals(visible_devices=visible)
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
