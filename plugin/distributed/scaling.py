"""DDP scaling arithmetic.

scaling efficiency = throughput on N ranks / (N x throughput on 1 rank)

exposed communication = the share of a synchronized step that communication adds on top of
compute, measured by difference: the same ranks run the same steps once with DDP's gradient
all-reduce (t_sync) and once under `no_sync()` with no all-reduce at all (t_local);
    comm_exposed_ratio = 1 - t_local / t_sync
Communication DDP hides behind the backward pass costs no step time and so counts as 0; a
ratio of 0.3 means 30 % of the synchronized step is waiting for gradients. Both are medians
over measured steps; timing noise can make t_local > t_sync, reported as 0 (the raw value is
kept next to it).
"""

from __future__ import annotations

__all__ = ["scaling_efficiency", "comm_exposed_ratio"]


def scaling_efficiency(throughput_n: float, world_size: int, throughput_1: float | None) -> float | None:
    """None when the 1-rank throughput is unknown (never a guessed baseline)."""
    if throughput_1 is None or throughput_1 <= 0:
        return None
    if world_size < 1:
        raise ValueError(f"world_size must be >= 1, got {world_size}")
    return throughput_n / (world_size * throughput_1)


def comm_exposed_ratio(step_sync_s: float, step_local_s: float) -> tuple[float, float]:
    """(ratio clipped to [0, 1], raw 1 - t_local / t_sync)."""
    if step_sync_s <= 0 or step_local_s <= 0:
        raise ValueError(f"step times must be > 0, got {step_sync_s}, {step_local_s}")
    raw = 1.0 - step_local_s / step_sync_s
    return min(1.0, max(0.0, raw)), raw
