"""The gate end to end on the real bench (issue 7, must-show 1), in fresh processes as CI runs it:

- the same benchmark run again on the same machine passes the gate (a window of three runs as
  baseline), several times;
- the same benchmark pinned to one core (`taskset -c 0`) against a 2-core baseline is flagged
  as a throughput regression.

Each run is `pytest bench/test_training.py --gpu=cpu --workload=gpt-small` with 100 steps (a few seconds).
The 2-core baseline uses the first two CPUs this process may run on. A side-by-side probe
before the runs and after each one checks that those two cores are really free (2 threads
must beat 1 clearly): on a machine whose cores other processes hold, the comparison would
measure the neighbours, and the tests skip saying so, with the measured ratio. Select with `-m gate_e2e`; override the workload and threshold
with TRAINBENCH_E2E_WORKLOAD / TRAINBENCH_E2E_THRESHOLD.
"""

import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from machine_probe import FREE_SPEEDUP, two_thread_speedup

from trainbench.records.results import load_results

pytestmark = pytest.mark.gate_e2e

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = os.environ.get("TRAINBENCH_E2E_WORKLOAD", "gpt-small")  # scales best on 2 cores
# Allowed throughput drop. With 20-step runs (~0.15 s windows) a clean-checkout CI rerun once
# dropped 18.7% (1186 -> 964 samples/s): far too short a window for a VM. With 100 steps, reruns
# on 2 cores moved up to -14% (1056 -> 905) and one core cost 32-34% (1108 -> 732, 1056 -> 715):
# 20% sits between the two with a margin on each side.
THRESHOLD = os.environ.get("TRAINBENCH_E2E_THRESHOLD", "20%")
STEPS = ["--steps=100", "--warmup=10"]
SAME_MACHINE_REPEATS = 3


def _cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def _pinned(cpus: list[int]) -> list[str]:
    return ["taskset", "-c", ",".join(map(str, cpus))]


def _pytest() -> list[str]:
    installed = any(e.name == "trainbench" for e in importlib.metadata.entry_points(group="pytest11"))
    return [sys.executable, "-m", "pytest"] + ([] if installed else ["-p", "trainbench.pytest_plugin.hooks"])


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env




def _require_free(pair: list[int], when: str) -> None:
    """Skip unless 2 threads on `pair` clearly beat 1, measured side by side right now."""
    speedup = two_thread_speedup(_pinned(pair), _env())
    if speedup < FREE_SPEEDUP:
        pytest.skip(f"CPUs {pair} are not free {when}: 2 threads ran {speedup:.2f}x the speed of 1 side by "
                    f"side (other processes hold the cores), so runs would measure the neighbours")


@pytest.fixture(scope="module")
def two_cores() -> list[int]:
    if shutil.which("taskset") is None:
        pytest.skip("taskset (util-linux) is not installed")
    cpus = _cpus()
    if len(cpus) < 2:
        pytest.skip(f"needs 2 CPUs to compare against 1; this process may use {len(cpus)}")
    _require_free(cpus[:2], "before the runs")
    return cpus[:2]


def _bench(tmp: Path, name: str, cpus: list[int], pair: list[int]) -> Path:
    """One bench run pinned to `cpus`; the probe on `pair` after it says whether the machine
    stayed quiet meanwhile (neighbours come and go within seconds on a shared box)."""
    out = tmp / f"{name}.json"
    cmd = _pinned(cpus) + _pytest() + [
        str(ROOT / "bench" / "test_training.py"), "--gpu=cpu", f"--workload={WORKLOAD}", *STEPS, "-q", "-p", "no:cacheprovider",
        "-p", "no:benchmark", f"--trainbench-results={out}", f"--trainbench-report={tmp / name}.md",
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, env=_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    _require_free(pair, f"after run {name!r}")
    return out


def _gate(base: list[Path], current: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "trainbench.cli", "gate", "--baseline", *map(str, base), "--current", str(current),
           "--max-regression", f"throughput={THRESHOLD},step_time={THRESHOLD},peak_mem=off"]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=_env())


@pytest.fixture(scope="module")
def baseline(two_cores, tmp_path_factory) -> list[Path]:
    """A window of three 2-core runs: the gate measures the run-to-run spread over them."""
    tmp = tmp_path_factory.mktemp("gate-e2e")
    return [_bench(tmp, f"baseline-2cores-{i}", two_cores, two_cores) for i in range(3)]


def _throughput(path: Path) -> float:
    return load_results(path).records[0].metrics["samples_per_s"]


def test_same_machine_reruns_pass_the_gate(baseline, two_cores, tmp_path):
    seen = [_throughput(b) for b in baseline]
    for i in range(SAME_MACHINE_REPEATS):
        current = _bench(tmp_path, f"rerun-{i}", two_cores, two_cores)
        seen.append(_throughput(current))
        gate = _gate(baseline, current)
        assert gate.returncode == 0, f"false alarm on rerun {i} (samples/s so far {seen}):\n{gate.stdout}{gate.stderr}"
        assert "PASS" in gate.stdout
    print(f"samples/s, baseline then reruns on CPUs {two_cores}: {[round(s, 1) for s in seen]}")


def test_half_the_cores_is_a_throughput_regression(baseline, two_cores, tmp_path):
    current = _bench(tmp_path, "one-core", two_cores[:1], two_cores)
    gate = _gate(baseline, current)
    print(f"samples/s: 2 cores {[round(_throughput(b), 1) for b in baseline]}, 1 core {_throughput(current):.1f}")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    regressions = gate.stdout.split("### Flagged")[1].split("###")[0]
    assert f"test_training[{WORKLOAD}-fp32]" in regressions and "| samples/s " in regressions
    # shown as an environment difference, not a refusal (CPU cores are not an ENV_MATCH_KEY)
    assert "cpu_count" in gate.stdout.split("### Other environment differences")[1]
