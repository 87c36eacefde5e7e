"""Write a plan to its directory: one task YAML per candidate, and plan.json with the estimate."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from tabulate import tabulate

from .manifest import Plan, PlannedTask, write_plan
from .plan import Candidate, PlanConfig, total_usd
from .source import Source
from .task import results_dir, task_dict, task_yaml
from ..records.atomic import atomic_write_text

__all__ = ["write_sweep", "estimate_lines"]


def _assumptions(cfg: PlanConfig) -> str:
    price = "spot price (interruptions not included)" if cfg.spot else "on-demand price"
    return (f"ESTIMATE, not a measurement: catalog {price} x nodes x ({cfg.setup_hours:g} h assumed for provisioning "
            f"and install + {cfg.expected_hours:g} h expected suite time); cap: {cfg.max_hours:g} h suite time")


def write_sweep(directory: Path, cfg: PlanConfig, source: Source, candidates: Sequence[Candidate]) -> Plan:
    # build every task first: a refused input must leave no half-written plan behind
    texts = {c.name: task_yaml(task_dict(c, cfg, source)) for c in candidates}
    tasks = []
    for c in candidates:
        rel = f"tasks/{c.name}.yaml"
        atomic_write_text(directory / rel, texts[c.name])
        tasks.append(PlannedTask(
            name=c.name, gpu=c.gpu, cloud=c.price.cloud, instance_type=c.price.instance_type,
            accelerator=c.accelerator, nodes=c.nodes, spot=c.spot, usd_per_hour=c.usd_per_hour,
            expected_usd=c.expected_usd, cap_usd=c.cap_usd, yaml=rel,
        ))
    estimate, cap = total_usd(candidates)
    plan = Plan(name=cfg.name, commit=source.commit, bucket=cfg.bucket, results_dir=results_dir(cfg),
                estimate_usd=estimate, cap_usd=cap, assumptions=_assumptions(cfg), tasks=tasks)
    write_plan(directory, plan)
    return plan


def estimate_lines(candidates: Sequence[Candidate], cfg: PlanConfig) -> list[str]:
    """The table printed before anything is launched (no files needed)."""
    rows = [[c.name, f"{c.price.cloud} {c.price.instance_type}", c.accelerator, c.nodes,
             "spot" if c.spot else "on-demand", f"{c.usd_per_hour:.3f}", f"{c.hours:g}", f"{c.expected_usd:.2f}",
             f"{c.cap_usd:.2f}", c.price.flag] for c in candidates]
    headers = ["task", "priced offer", "accelerators", "nodes", "kind", "$/h", "hours (est.)", "est. $", "cap $",
               "flag"]
    estimate, cap = total_usd(candidates)
    return [
        tabulate(rows, headers=headers, tablefmt="github"),
        "",
        f"estimated cost of the sweep: ${estimate:.2f} (at most ${cap:.2f} if every task runs to its time cap)",
        _assumptions(cfg),
    ]
