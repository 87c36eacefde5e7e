"""Cost and time per epoch from a throughput and a price.

    hours = epoch_samples / samples_per_s / 3600
    cost  = hours x price per GPU-hour x GPUs used

`samples_per_s` is the throughput of all `gpus` together (what the run measured, or a
projection), and the price per GPU-hour is the instance price / GPUs in the instance.
"""

from __future__ import annotations

__all__ = ["epoch_hours", "cost_per_epoch"]


def epoch_hours(epoch_samples: float, samples_per_s: float) -> float:
    """Wall-clock hours for one epoch at `samples_per_s` (> 0)."""
    if samples_per_s <= 0 or epoch_samples <= 0:
        raise ValueError(f"need positive epoch_samples and samples_per_s, got {epoch_samples}, {samples_per_s}")
    return epoch_samples / samples_per_s / 3600.0


def cost_per_epoch(epoch_samples: float, samples_per_s: float, price_per_gpu_hour: float, gpus: int = 1) -> float:
    """USD for one epoch on `gpus` GPUs that together process `samples_per_s`."""
    if price_per_gpu_hour < 0 or gpus < 1:
        raise ValueError(f"need price >= 0 and gpus >= 1, got {price_per_gpu_hour}, {gpus}")
    return epoch_hours(epoch_samples, samples_per_s) * price_per_gpu_hour * gpus
