"""Rank 0's `result.json` -> Record fields (the results-file contract).

Used by the pytest side after a launch, and by rank 0 itself with `--results` on multi-node
runs (where no pytest process sees the other nodes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .scaling import comm_exposed_ratio, scaling_efficiency
from ..metrics import step_time_stats
from ..records.record import Record

__all__ = ["dist_config", "collective_records", "ddp_records", "fsdp_records", "write_results_file"]


def dist_config(result: dict[str, Any]) -> dict[str, Any]:
    """What every distributed record stores about the communication layer."""
    detected = result.get("detected") or {}
    return {
        "backend": result.get("backend"),
        "nccl_version": detected.get("nccl_version"),  # None: gloo run or torch without NCCL
        "nccl_env": result.get("nccl_env", {}),  # effective NCCL_* settings on rank 0
        "detected_topology": {
            "gpu_count": detected.get("gpu_count"),
            "nvlink_links_per_gpu": detected.get("nvlink_links_per_gpu"),  # None: no NVML / GPU
            "nvlink_links_total": detected.get("nvlink_links_total"),
        },
    }


def collective_records(result: dict[str, Any], topology: str) -> list[dict[str, Any]]:
    """One record (as keyword fields for Record / Bench.record) per op and size."""
    common = dist_config(result)
    n = result["world_size"]
    out = []
    for case in result["cases"]:
        metrics = {k: case[k] for k in ("time_s", "time_p10_s", "time_p90_s", "time_min_s", "time_max_s",
                                        "algbw_gbps", "busbw_gbps", "busbw_gbps_best")}
        ok = case["correct"]
        out.append(dict(
            kind="collective",
            topology=topology,
            world_size=n,
            status="passed" if ok else "failed",
            message=None if ok else f"{case['op']} {case['size_bytes']} B: wrong result on ranks {case['incorrect_ranks']}",
            metrics=metrics,
            step_times_s=case["trial_times_s"],  # per trial: the slowest rank's time per call
            config={
                "op": case["op"],
                "size_bytes": case["size_bytes"],  # nccl-tests convention: the whole buffer
                "count": case["count"],
                "dtype": result["dtype"],
                "busbw_factor": case["busbw_factor"],  # exact fraction, e.g. "3/2"
                "correct": ok,
                "warmup": result["warmup"],
                "trials": result["trials"],
                "iters_per_trial": result["iters"],
                **common,
            },
        ))
    return out


def ddp_records(result: dict[str, Any], topology: str) -> list[dict[str, Any]]:
    """One record per world size; efficiency against the 1-rank run of the same launch."""
    common = dist_config(result)
    by_k = {run["world_size"]: run for run in result["runs"]}
    base = by_k.get(1)
    base_tput = base["samples"] / base["wall_s"] if base else None
    out = []
    for k, run in sorted(by_k.items()):
        tput = run["samples"] / run["wall_s"]
        stats = step_time_stats(run["step_times_s"])
        exposed = raw = local_median = None
        if run.get("local_step_times_s"):
            local_median = step_time_stats(run["local_step_times_s"])["step_time_median_s"]
            exposed, raw = comm_exposed_ratio(stats["step_time_median_s"], local_median)
        wait, total = sum(run["input_wait_s"]), sum(run["step_times_s"])
        out.append(dict(
            kind=result.get("benchmark", "ddp"),
            workload=result["workload"],
            size=result["size"],
            precision=result["precision"],
            batch_size=run["per_rank_batch"],
            topology=topology,
            world_size=k,
            metrics={
                "samples_per_s": tput,
                "scaling_efficiency": scaling_efficiency(tput, k, base_tput),
                "comm_exposed_ratio": exposed,
                **stats,
                "stall_ratio": min(1.0, wait / total) if total > 0 else None,
                "wall_s": run["wall_s"],
                "samples_measured": run["samples"],
                "peak_mem_bytes": run["peak_mem_bytes"],
                "loss_first": run["losses"][0],
                "loss_last": run["losses"][-1],
            },
            step_times_s=run["step_times_s"],  # per step: the slowest rank's
            config={
                "global_batch": run["global_batch"],
                "batch_mode": result["batch_mode"],  # per-rank (weak scaling) or global
                "bucket_mb": result["bucket_mb"],
                "steps": result["steps"],
                "warmup": result["warmup"],
                "grad_accum": result["grad_accum"],
                "seed": result["seed"],
                "launched_ranks": result["launched_ranks"],
                "baseline_samples_per_s": base_tput,
                "step_time_no_sync_median_s": local_median,
                "comm_exposed_ratio_raw": raw,
                "losses": run["losses"],
                "peak_mem_kind": run["peak_mem_kind"],
                **common,
            },
        ))
    return out


def fsdp_records(result: dict[str, Any], topology: str) -> list[dict[str, Any]]:
    """DDP's record layout (kind "fsdp") plus the per-rank bytes of the sharded state and the
    fine-tuning mode; the exposed-communication ratio counts the gradient reduce-scatter only."""
    out = ddp_records(result, topology)
    by_k = {run["world_size"]: run for run in result["runs"]}
    for rec in out:
        run = by_k[rec["world_size"]]
        rec["metrics"]["state_bytes_per_rank"] = run.get("state_bytes_per_rank")
        diff = run.get("params_vs_1rank") or {}
        rec["metrics"]["params_max_abs_diff_vs_1rank"] = diff.get("max_abs")
        rec["metrics"]["params_rel_l2_vs_1rank"] = diff.get("rel_l2")
        rec["config"]["params_within_1e-5_vs_1rank"] = diff.get("within_1e-5")
        rec["config"].update(finetune=result.get("finetune", "full"), fsdp_units=run.get("fsdp_units"),
                             activation_checkpointing=result.get("activation_checkpointing", False),
                             comm_window="no reduce-scatter (set_requires_gradient_sync(False)); all-gathers kept")
    return out


def write_results_file(path: str | Path, result: dict[str, Any], topology: str) -> Path:
    """A trainbench results file from one result (multi-node: rank 0 writes it)."""
    from ..records.environment import capture_environment
    from ..records.results import write_results
    from ..catalog.profile import resolve_profile

    fold = {"collectives": collective_records, "fsdp": fsdp_records}.get(result["benchmark"], ddp_records)
    test = f"torchrun -m trainbench.cli.rank {result['benchmark']}"
    profile = resolve_profile("auto")[0]  # the detected device: no --gpu outside pytest
    env = capture_environment(profile)
    records = [Record(test=test, gpu=profile, **fields) for fields in fold(result, topology)]
    return write_results(path, env, records)
