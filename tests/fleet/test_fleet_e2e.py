"""`fleet collect` on results files that real CPU runs of the suite wrote (opt-in: two bench runs
take about a minute on a loaded 2-core box). Run with TRAINBENCH_FLEET_E2E=1 and `-m fleet_e2e`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from trainbench.cli import main

pytestmark = [
    pytest.mark.fleet_e2e,
    pytest.mark.skipif(not os.environ.get("TRAINBENCH_FLEET_E2E"), reason="opt-in: set TRAINBENCH_FLEET_E2E=1"),
]

ROOT = Path(__file__).resolve().parents[2]


def test_collect_ranks_with_the_files_two_real_cpu_runs_wrote(tmp_path, capsys):
    results = tmp_path / "sweep" / "results"
    for run in ("a", "b"):  # two runs, as two candidates' machines would write them
        cmd = [sys.executable, "-m", "pytest", "bench/test_training.py", "-q", "-p", "no:cacheprovider",
               "-k", "resnet50 and fp32", "--gpu=cpu", "--steps=3", "--warmup=1",
               f"--trainbench-results={results / f'cpu-{run}.json'}", f"--trainbench-report={tmp_path / run}.md"]
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=600)
    assert main(["fleet", "collect", str(tmp_path / "sweep"), "--no-fetch"]) == 0
    md = (tmp_path / "sweep" / "select.md").read_text()
    assert re.search(r"Measured: cpu \(tiny, fp32, batch \d+, 1 device\): [\d.,]+ samples/s per device, "
                     r"median of 2 run\(s\)", md)
    assert "| measured on cpu " in md and "projected from cpu" in md
