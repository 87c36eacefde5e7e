"""Handing the plan's task YAMLs to SkyPilot, through a seam the tests replace.

`Sky` is the one class that touches SkyPilot: `sky launch` for on-demand candidates (a cluster
per candidate, autostopped when idle, torn down when results go to a bucket) and
`sky jobs launch` for spot ones (managed jobs: SkyPilot recovers them from preemptions). It
fetches results from a cluster with rsync over the ssh aliases SkyPilot writes for each
cluster. A candidate whose launch fails is recorded as failed in launch.json; the others go on.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Protocol

from ..errors import InputError
from .manifest import Plan, PlannedTask, write_launch

__all__ = ["Launcher", "Sky", "launch_plan", "require_sky"]

AUTOSTOP_MIN = 30  # an on-demand cluster left for rsync stops after this long idle


class Launcher(Protocol):
    def launch(self, task_yaml: Path, cluster: str, down: bool) -> str:
        """Start an on-demand cluster running the task; returns what to tell the user (job id)."""

    def jobs_launch(self, task_yaml: Path, name: str) -> str:
        """Submit the task as a managed job (spot, recovered by SkyPilot); returns its id."""

    def fetch(self, cluster: str, remote_dir: str, local_dir: Path) -> None:
        """Copy the results folder of a cluster's head node into local_dir."""


def require_sky():
    try:
        import sky
    except ImportError:
        raise InputError("SkyPilot is not installed; pip install 'pytest-trainbench[fleet]' "
                         "(then `sky check` to set up cloud credentials)") from None
    return sky


class Sky:
    """The real launcher: SkyPilot's Python SDK (each call returns a request; we wait on it)."""

    def __init__(self):
        self.sky = require_sky()

    def launch(self, task_yaml: Path, cluster: str, down: bool) -> str:
        task = self.sky.Task.from_yaml(str(task_yaml))
        request = self.sky.launch(task, cluster_name=cluster, down=down,
                                  idle_minutes_to_autostop=None if down else AUTOSTOP_MIN)
        job_id, _ = self.sky.stream_and_get(request)
        return f"cluster {cluster}, job {job_id}"

    def jobs_launch(self, task_yaml: Path, name: str) -> str:
        task = self.sky.Task.from_yaml(str(task_yaml))
        job_ids, _ = self.sky.stream_and_get(self.sky.jobs.launch(task, name=name))
        return f"managed job {name} {job_ids}"

    def fetch(self, cluster: str, remote_dir: str, local_dir: Path) -> None:
        local_dir.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(["rsync", "-az", f"{cluster}:{remote_dir.rstrip('/')}/", f"{local_dir}/"],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"rsync from {cluster} failed: {done.stderr.strip().splitlines()[-1:]}")


def _launch_one(launcher: Launcher, directory: Path, plan: Plan, task: PlannedTask) -> str:
    yaml_path = directory / task.yaml
    if task.spot:
        return launcher.jobs_launch(yaml_path, task.name)
    return launcher.launch(yaml_path, task.name, down=plan.bucket is not None)


def launch_plan(directory: Path, plan: Plan, launcher: Launcher, only: list[str] | None = None) -> list[str]:
    """Launch each task (or those whose GPU is in `only`); returns the lines to print."""
    lines = []
    for task in plan.tasks:
        if only and task.gpu not in only:
            continue
        try:
            what = _launch_one(launcher, directory, plan, task)
        except Exception as exc:  # one candidate's failure (quota, no capacity) must not stop the sweep
            entry = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
            lines.append(f"{task.name}: launch FAILED ({entry['error']})")
        else:
            entry = {"status": "launched", "what": what}
            lines.append(f"{task.name}: launched ({what})")
        write_launch(directory, task.name, entry)
    return lines
