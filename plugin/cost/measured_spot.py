"""The spot-model inputs that `bench/test_preemption.py` measured (kind `goodput` records):
restart time (process start to first step, checkpoint load included), checkpoint save and load
seconds, and the store they were measured on. `trainbench select --spot` uses them, labelled
"measured on ...", in place of its assumptions when the results hold such records."""

from __future__ import annotations

import statistics
from dataclasses import replace
from typing import Sequence

from .spot import SpotAssumptions

__all__ = ["measured_spot_assumptions"]


def measured_spot_assumptions(results: Sequence, base: SpotAssumptions, restart_given: bool = False) -> SpotAssumptions:
    """`base` with the measured restart and checkpoint times, or `base` unchanged when no goodput
    record exists. Object-store records are preferred: on spot the local disk dies with the VM.
    `restart_given`: the user passed --restart-min, which wins over the measurement."""
    found = [(res.environment, r) for res in results for r in res.records
             if r.kind == "goodput" and r.status == "passed" and r.metrics.get("restart_to_first_step_s")]
    if not found:
        return base
    stores = {r.storage for _, r in found}
    store = "s3" if "s3" in stores else sorted(stores)[0]
    mine = [(env, r) for env, r in found if r.storage == store]
    env = mine[0][0]
    device = env.get("gpu_name") or f"CPU {env.get('cpu_model')}"
    med = lambda key: statistics.median(r.metrics[key] for _, r in mine if r.metrics.get(key))  # noqa: E731
    label = f"measured on {device}, {store} checkpoint store, {len(mine)} goodput record(s)"
    return replace(base, restart_s=base.restart_s if restart_given else med("restart_to_first_step_s"),
                   measured_save_s=med("ckpt_save_s"), measured_load_s=med("ckpt_load_s"), source=label,
                   restart_measured=not restart_given)
