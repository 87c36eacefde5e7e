"""The device memory really free on the machine the run is on (`torch.cuda.mem_get_info`).

The catalog states a card's size; the memory a run can use is less: the CUDA context, other
processes, a MIG slice. The fit is judged against what is measured where a GPU is present.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["DeviceMemory", "measure_device_memory"]


@dataclass(frozen=True)
class DeviceMemory:
    free_bytes: int  # cudaMemGetInfo free, after this process's CUDA context exists
    total_bytes: int  # cudaMemGetInfo total (a MIG slice reports its own)
    device: str = "cuda:0"


def measure_device_memory(device: str | torch.device = "cuda:0") -> DeviceMemory | None:
    """Free and total bytes of `device`; None without a usable CUDA device."""
    dev = torch.device(device)
    if dev.type != "cuda" or not torch.cuda.is_available():
        return None
    try:
        free, total = torch.cuda.mem_get_info(dev)
    except RuntimeError:  # a device torch lists but cannot open
        return None
    return DeviceMemory(int(free), int(total), str(dev))
