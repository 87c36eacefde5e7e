"""The documented CI workflow stays in step with the code: it parses, and the thresholds, GPU
profile and commands it uses exist."""

import re
from pathlib import Path

import pytest

from trainbench.catalog import gpu_names
from trainbench.cli import build_parser
from trainbench.gate.thresholds import parse_thresholds

WORKFLOW = Path(__file__).resolve().parents[2] / "examples" / "github-actions-gpu.yml"


def test_workflow_parses_and_uses_real_flags():
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load(WORKFLOW.read_text())
    job = doc["jobs"]["bench"]
    assert job["env"]["GPU_PROFILE"] in gpu_names()
    scripts = "\n".join(step.get("run", "") for step in job["steps"])
    spec = re.search(r"--max-regression (\S+)", scripts).group(1)
    parse_thresholds(spec)  # raises on an unknown metric or bad value
    parser = build_parser()
    for command in ("gate", "report", "noise", "history"):
        assert f"trainbench {command} " in scripts
    # the baseline is a directory holding a rolling window of main's results
    assert 'trainbench gate --baseline "${{ steps.baseline.outputs.dir }}"' in scripts
    assert int(job["env"]["WINDOW_RUNS"]) >= 3  # the least that measures a run-to-run spread
    args = parser.parse_args(["gate", "--baseline", "window/", "--current", "c.json", "--max-regression", spec])
    assert args.func is not None
    for argv in (["noise", "window/"], ["history", "window/", "--out", "reports/history"]):
        assert parser.parse_args(argv).func is not None
    assert "--trainbench-results=" in scripts and "pytest bench/" in scripts
