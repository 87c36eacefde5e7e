"""Which stall figure to believe, and why two of them can disagree.

The in-loop stall (time blocked in `next(loader)` / step time) only sees the training process
*waiting*. Loader workers also slow it down while it computes: they compete for the same cores
(on a CPU box, the training process's intra-op threads are oversubscribed by the decoding
workers; on a GPU box with few vCPUs per GPU, kernel launches queue behind them). That time is
compute that got slower, not time spent waiting, so the in-loop reading under-reads an
input-bound run (measured here on 2 cores: 0.149 in loop against 0.583 lost to input).

The differential (DS-Analyzer) sees both: 1 - throughput(real data) / throughput(the same
batches pre-loaded in device memory). Where a storage benchmark has a pre-loaded run, that is
the headline `stall_ratio`; `stall_in_loop` keeps the in-loop reading, and a gap over
`DISAGREE` is explained with what to change."""

from __future__ import annotations

import os
from typing import Any, Mapping

import torch

__all__ = ["DISAGREE", "apply_differential", "explain_disagreement", "thread_settings"]

DISAGREE = 0.05  # in-loop and differential stall further apart than this: the report says why


def apply_differential(metrics: dict[str, Any], preloaded_samples_per_s: float) -> None:
    """Make the differential the headline stall of a storage record (in place)."""
    diff = max(0.0, 1.0 - metrics["samples_per_s"] / preloaded_samples_per_s)
    metrics["samples_per_s_preloaded"] = preloaded_samples_per_s
    metrics["stall_differential"] = diff
    metrics["stall_in_loop"] = metrics["stall_ratio"]
    metrics["stall_ratio"] = diff
    metrics["stall_ratio_source"] = "differential"


def thread_settings(num_workers: int | None) -> dict[str, Any]:
    """The threads the training process and its loader workers run with (recorded per benchmark)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cores": cores,
        "intra_op_threads": torch.get_num_threads(),
        "inter_op_threads": torch.get_num_interop_threads(),
        "loader_workers": num_workers,
        "worker_intra_op_threads": 1 if num_workers else None,  # torch's DataLoader workers run 1 thread
    }


def explain_disagreement(metrics: Mapping[str, Any], config: Mapping[str, Any]) -> str | None:
    """Why `stall_in_loop` and the differential differ by more than DISAGREE, and what to change."""
    loop, diff = metrics.get("stall_in_loop"), metrics.get("stall_differential")
    if loop is None or diff is None or abs(diff - loop) <= DISAGREE:
        return None
    t = config.get("threads") or {}
    cores, intra, workers = t.get("cores"), t.get("intra_op_threads"), t.get("loader_workers") or 0
    if diff > loop:
        busy = (intra or 0) + workers
        why = (f"input cost {diff:.0%} of throughput but the loop waited only {loop:.0%}: the other "
               f"{diff - loop:.0%} is compute slowed by the loader, not waiting for it")
        if cores and busy > cores:
            why += (f" ({intra} intra-op threads + {workers} loader worker(s) on {cores} cores are oversubscribed)")
        return (why + "; try fewer intra-op threads (torch.set_num_threads / OMP_NUM_THREADS), fewer or cheaper "
                      "workers (decode cost), or more cores per GPU")
    return (f"the loop waited {loop:.0%} but pre-loaded batches ran only {diff:.0%} faster: part of the wait "
            f"overlaps work the device would idle through anyway (short window or noisy machine); rerun longer")
