"""Terminal/markdown tables of the distributed records: one row per collective op and size,
one per DDP world size. Missing numbers print as n/a, never 0."""

from __future__ import annotations

from typing import Sequence

from tabulate import tabulate

from ..records.record import Record
from ..report.summary import fmt

__all__ = ["collective_table", "ddp_table", "fsdp_table", "distributed_tables"]


def _size(b: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= scale:
            return f"{b / scale:g} {unit}"
    return f"{b} B"


def collective_table(records: Sequence[Record], tablefmt: str = "simple") -> str:
    rows = [[r.topology, r.world_size, r.config.get("op"), _size(r.config.get("size_bytes", 0)), r.config.get("dtype"),
             fmt(r.metrics.get("time_s"), ".1f", 1e6), fmt(r.metrics.get("algbw_gbps"), ".3g"),
             fmt(r.metrics.get("busbw_gbps"), ".3g"), "yes" if r.config.get("correct") else "NO"]
            for r in records if r.kind == "collective" and r.status == "passed"]
    headers = ["topology", "ranks", "op", "size", "dtype", "time µs (median)", "algbw GB/s", "busbw GB/s", "correct"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True) if rows else ""


def ddp_table(records: Sequence[Record], tablefmt: str = "simple") -> str:
    rows = [[r.workload, r.topology, r.world_size, r.batch_size, r.config.get("global_batch"),
             r.config.get("bucket_mb"), fmt(r.metrics.get("samples_per_s"), ".1f"),
             fmt(r.metrics.get("scaling_efficiency"), ".1%"), fmt(r.metrics.get("comm_exposed_ratio"), ".1%"),
             fmt(r.metrics.get("step_time_median_s"), ".1f", 1e3)]
            for r in records if r.kind == "ddp" and r.status == "passed"]
    headers = ["workload", "topology", "ranks", "batch/rank", "global batch", "bucket MB", "samples/s",
               "scaling eff.", "exposed comm", "step p50 ms"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True) if rows else ""


def fsdp_table(records: Sequence[Record], tablefmt: str = "simple") -> str:
    fsdp = [r for r in records if r.kind == "fsdp" and r.status == "passed"]
    replicated = {(r.workload, r.size, r.precision): r.metrics.get("state_bytes_per_rank")
                  for r in fsdp if r.world_size == 1}  # what every DDP rank holds
    rows = [[r.workload, r.config.get("finetune"), r.world_size, r.batch_size, fmt(r.metrics.get("samples_per_s"), ".1f"),
             fmt(r.metrics.get("scaling_efficiency"), ".1%"), fmt(r.metrics.get("comm_exposed_ratio"), ".1%"),
             fmt(r.metrics.get("state_bytes_per_rank"), ".3g", 1e-6),
             fmt(replicated.get((r.workload, r.size, r.precision)), ".3g", 1e-6),
             fmt(r.metrics.get("peak_mem_bytes"), ".3g", 1e-6) + (" RSS" if r.config.get("peak_mem_kind") == "process_rss" else ""),
             fmt(r.metrics.get("params_max_abs_diff_vs_1rank"), ".1e")]
            for r in fsdp]
    headers = ["workload", "finetune", "ranks", "batch/rank", "samples/s", "scaling eff.", "exposed RS",
               "state/rank MB", "DDP state/rank MB", "peak mem MB", "params vs 1 rank"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True) if rows else ""


def distributed_tables(records: Sequence[Record], tablefmt: str = "simple") -> str:
    """Both tables with a title line each; "" when the session has no distributed record."""
    parts = []
    coll = collective_table(records, tablefmt)
    if coll:
        parts += ["collectives (nccl-tests definitions: busbw = algbw x 2(n-1)/n all_reduce, "
                  "(n-1)/n all_gather/reduce_scatter, 1 broadcast; size = whole buffer)", coll]
    ddp = ddp_table(records, tablefmt)
    if ddp:
        parts += ["DDP scaling (efficiency = throughput N / (N x throughput 1); exposed comm = "
                  "1 - step(no_sync) / step(DDP))", ddp]
    fsdp = fsdp_table(records, tablefmt)
    if fsdp:
        parts += ["FSDP2 full shard (state/rank = this rank's shards of weights + grads + optimizer state; DDP "
                  "replicates the 1-rank figure on every rank; exposed RS = 1 - step(no reduce-scatter) / step)", fsdp]
    return "\n\n".join(parts)
