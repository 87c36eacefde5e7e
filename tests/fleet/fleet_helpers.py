"""Shared by the fleet tests: a plan written through the CLI, and a launcher that records calls."""

from __future__ import annotations

import shutil
from pathlib import Path

from trainbench.cli import main

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "https://git.example/trainbench.git"


def plan(out: Path, *argv: str) -> int:
    return main(["fleet", "plan", "--out", str(out), "--repo", REPO, "--commit", COMMIT, *argv])


class FakeLauncher:
    """Stands in for SkyPilot: records every call; `fail` names clusters whose launch raises;
    `remote` maps a cluster to the local folder that plays its results directory."""

    def __init__(self, fail=(), remote=None):
        self.calls = []
        self.fail = set(fail)
        self.remote = remote or {}

    def launch(self, task_yaml, cluster, down):
        self.calls.append(("launch", Path(task_yaml).name, cluster, down))
        if cluster in self.fail:
            raise RuntimeError(f"no capacity for {cluster}")
        return f"cluster {cluster}, job 1"

    def jobs_launch(self, task_yaml, name):
        self.calls.append(("jobs_launch", Path(task_yaml).name, name))
        if name in self.fail:
            raise RuntimeError(f"quota exceeded for {name}")
        return f"managed job {name} [7]"

    def fetch(self, cluster, remote_dir, local_dir):
        self.calls.append(("fetch", cluster, remote_dir))
        local_dir.mkdir(parents=True, exist_ok=True)
        for f in Path(self.remote[cluster]).glob("*.json"):
            shutil.copy(f, local_dir / f.name)
