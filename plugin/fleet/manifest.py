"""The plan directory: `plan.json` (what was planned and its estimate), `tasks/<name>.yaml`,
`launch.json` (what each launch did), `results/` (fetched results files), select.md/html.

Every file is written atomically, and `launch.json` after each candidate, so a failed or
killed launch leaves the other candidates' entries as they were.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..records.atomic import atomic_write_text

__all__ = ["PlannedTask", "Plan", "write_plan", "read_plan", "read_launches", "write_launch"]

PLAN_FILE = "plan.json"
LAUNCH_FILE = "launch.json"


@dataclass(frozen=True)
class PlannedTask:
    name: str
    gpu: str
    cloud: str
    instance_type: str  # the catalog offer the estimate priced; SkyPilot may pick another
    accelerator: str
    nodes: int
    spot: bool
    usd_per_hour: float
    expected_usd: float
    cap_usd: float
    yaml: str  # path relative to the plan directory


@dataclass(frozen=True)
class Plan:
    name: str
    commit: str
    bucket: str | None
    results_dir: str  # on the machines: bucket mount path or ~/trainbench-results
    estimate_usd: float
    cap_usd: float
    assumptions: str
    tasks: list[PlannedTask] = field(default_factory=list)


def write_plan(directory: Path, plan: Plan) -> Path:
    return atomic_write_text(directory / PLAN_FILE, json.dumps(asdict(plan), indent=2) + "\n")


def read_plan(directory: Path) -> Plan:
    path = directory / PLAN_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no plan here; run `trainbench fleet plan --out {directory}` first") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: unreadable plan ({exc}); write it again with `trainbench fleet plan`") from None
    tasks = [PlannedTask(**t) for t in data.pop("tasks")]
    return Plan(**data, tasks=tasks)


def read_launches(directory: Path) -> dict[str, dict[str, Any]]:
    path = directory / LAUNCH_FILE
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def write_launch(directory: Path, name: str, entry: dict[str, Any]) -> Path:
    launches = read_launches(directory)
    launches[name] = entry
    return atomic_write_text(directory / LAUNCH_FILE, json.dumps(launches, indent=2, sort_keys=True) + "\n")
