"""The main job, end to end, as a user runs it: `pytest bench/` on this (CPU) machine."""

import subprocess
import sys
import time
from pathlib import Path

from trainbench.records.results import load_results

ROOT = Path(__file__).resolve().parents[2]


def test_pytest_bench_runs_every_workload_and_leaves_results(tmp_path):
    results, report = tmp_path / "results.json", tmp_path / "latest.md"
    t0 = time.perf_counter()
    proc = subprocess.run(
        # exactly the plain run: the convergence and preemption drills are left out of it (they
        # have their own tests in tests/convergence and tests/checkpoint)
        [sys.executable, "-m", "pytest", "bench/", "-q", "-p", "no:cacheprovider",
         f"--trainbench-results={results}", f"--trainbench-report={report}"],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    print(f"pytest bench/ took {time.perf_counter() - t0:.0f} s")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    res = load_results(results)
    training = {r.workload: r for r in res.records if r.kind == "training" and r.test.startswith("bench/test_training.py")}
    assert set(training) == {"resnet50", "bert-base", "gpt-small", "llama-1b"}
    for r in training.values():
        assert r.status == "passed"
        assert r.metrics["samples_per_s"] > 0
        assert 0 <= r.metrics["stall_ratio"] <= 1
        assert r.metrics["peak_mem_bytes"] > 0
        assert len(r.step_times_s) == r.config["measured_steps"] >= r.config["steps"]
    assert "trainbench:" in proc.stdout and report.exists()
    assert not any(r.kind in ("convergence", "goodput") for r in res.records)  # drills: only when asked for
