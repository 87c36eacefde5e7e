"""The window gate on the real bench, as CI runs it (issue 13, must-show 1). Opt-in: `-m gate_e2e`.

RUNS runs of `pytest bench/` on the same commit on 2 cores; each is gated with default
settings against a window of all the others and against one other: no regression may be
reported. Then PINNED runs under `taskset -c 0` (one core), each gated against the window of
2-core runs: the gate must fail (exit 1) on every one.

Environment knobs (a full run of the default bench 10 + 10 times takes an hour on 2 cores):
    TRAINBENCH_E2E_RUNS=10            2-core runs
    TRAINBENCH_E2E_PINNED=3           one-core runs
    TRAINBENCH_E2E_BENCH="bench/"     what to run, pytest arguments (e.g. "bench/test_training.py")
    TRAINBENCH_E2E_OUT=DIR            keep the results files there (for `trainbench history`)
    TRAINBENCH_E2E_REUSE=1            gate the run-NN.json / one-core-NN.json already in OUT
                                      instead of running the bench again (a gate change, same data)

It prints, per run, the wall time of the bench, the gate's verdict counts and throughputs.
"""

import contextlib
import io
import math
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trainbench.cli import main
from trainbench.records.results import load_results

pytestmark = pytest.mark.gate_e2e

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("TRAINBENCH_E2E_RUNS", "10"))
PINNED = int(os.environ.get("TRAINBENCH_E2E_PINNED", "3"))
BENCH = shlex.split(os.environ.get("TRAINBENCH_E2E_BENCH", "bench/"))
REUSE = os.environ.get("TRAINBENCH_E2E_REUSE") == "1"


def _bench(out: Path, name: str, pin: list[str]) -> tuple[Path, float]:
    path = out / f"{name}.json"
    if REUSE:
        assert path.exists(), f"TRAINBENCH_E2E_REUSE=1 but {path} is missing"
        return path, math.nan
    cmd = pin + [sys.executable, "-m", "pytest", *BENCH, "--gpu=cpu", "-q", "-p", "no:cacheprovider",
                 f"--trainbench-results={path}", f"--trainbench-report={out / name}.md"]
    env = dict(os.environ)
    for key in ("GITHUB_STEP_SUMMARY", "TRAINBENCH_MIN_WARMUP_S", "TRAINBENCH_MIN_WINDOW_S"):
        env.pop(key, None)  # the default time floors, as a user gets them
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env)
    wall = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return path, wall


def _gate(base: list[Path], current: Path) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["gate", "--baseline", *map(str, base), "--current", str(current)])
    return rc, buf.getvalue()


def _counts(text: str) -> str:
    return text.split("- metrics: ")[1].splitlines()[0]


def _training_tput(path: Path) -> dict[str, float]:
    return {r.workload: round(r.metrics["samples_per_s"], 1) for r in load_results(path).records
            if r.kind == "training" and r.status == "passed" and r.storage == "synthetic"}


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    keep = os.environ.get("TRAINBENCH_E2E_OUT")
    path = Path(keep) if keep else tmp_path_factory.mktemp("window-e2e")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def two_core_runs(out) -> list[Path]:
    runs = []
    for i in range(RUNS):
        path, wall = _bench(out, f"run-{i:02d}", [])
        print(f"2-core run {i}: {wall:.0f} s, training samples/s {_training_tput(path)}")
        runs.append(path)
    return runs


def test_reruns_gated_against_the_others_report_no_regression(two_core_runs):
    false_alarms = []
    for i, current in enumerate(two_core_runs):
        others = [p for p in two_core_runs if p != current]
        for label, window in (("window", others), ("one other", [others[i % len(others)]])):
            rc, text = _gate(window, current)
            print(f"run {i} vs {label}: exit {rc}; {_counts(text)}")
            if rc != 0:
                false_alarms.append(f"run {i} vs {label}:\n{text.split('### All compared')[0]}")
    assert not false_alarms, "\n".join(false_alarms)


def test_one_core_is_flagged_every_time(two_core_runs, out):
    if shutil.which("taskset") is None or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs taskset and 2 CPUs")
    cpu = str(min(os.sched_getaffinity(0)))
    missed = []
    for i in range(PINNED):
        current, wall = _bench(out, f"one-core-{i:02d}", ["taskset", "-c", cpu])
        rc, text = _gate(two_core_runs, current)
        print(f"one-core run {i}: {wall:.0f} s, exit {rc}; {_counts(text)}; training samples/s {_training_tput(current)}")
        if rc != 1:
            missed.append(i)
    assert not missed, f"one-core runs the gate passed: {missed}"
