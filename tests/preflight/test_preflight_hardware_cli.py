"""`trainbench preflight --hardware` as a boot script runs it: the tier's items, the measured
peak printed per precision, the exit code, and the peak in the results file's environment."""

import subprocess
import sys
from pathlib import Path

import pytest

from trainbench.preflight.hardware import HARDWARE_ITEMS
from trainbench.records.results import load_results

ROOT = Path(__file__).resolve().parents[2]


def trainbench(*args):
    return subprocess.run([sys.executable, "-m", "trainbench.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_hardware_tier_on_this_cpu_prints_the_peak_and_exits_0(tmp_path):
    results = tmp_path / "hw.json"
    proc = trainbench("preflight", "--hardware", "--no-pipeline", "--no-read-probe", "--workload=gpt-small",
                      "--burn-s=1", f"--data-dir={tmp_path}", f"--results={results}")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr[-3000:]
    lines = {line.split("]")[1].split()[0]: line[:8] for line in out.splitlines() if line.startswith("  [")}
    for item in HARDWARE_ITEMS:
        assert lines[item] == "  [n/a ]", out  # no NVIDIA driver here
    assert lines["matmul_peak"] == lines["burn"] == "  [pass]"
    assert "measured matmul peak" in out and "cpu      fp32" in out and "GFLOP/s" in out
    res = load_results(results)
    peak = res.environment["matmul_peak"]["fp32"]
    assert peak["flops_per_s"] > 0 and peak["method"].startswith("measured")
    burn = next(r for r in res.records if r.config["check"] == "burn")
    assert burn.metrics["mismatches"] == 0 and burn.metrics["results_checked"] > 0


@pytest.mark.parametrize("flag, message", [("--burn-s=-1", "--burn-s"), ("--expect-nvlinks=x", "--expect-nvlinks")])
def test_bad_hardware_flags_are_one_line_exit_2(flag, message):
    proc = trainbench("preflight", "--hardware", flag)
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_fail_on_warn_turns_a_warning_into_exit_1(monkeypatch, tmp_path, capsys):
    """A strict boot gate: `--fail-on warn` drains a machine whose worst item is a warning."""
    import torch

    from trainbench.cli import main
    from trainbench.cli import preflight as cli_preflight
    from trainbench.preflight import WARN, Check, Facts, PreflightResult

    facts = Facts(torch_version=torch.__version__, torch_cuda=None, cuda_available=False)
    warned = Check("persistence", "hardware", WARN, "persistence mode off", "sudo nvidia-smi -pm 1")
    monkeypatch.setattr(cli_preflight, "run_preflight",
                        lambda cfg: PreflightResult(cfg, facts, torch.device("cpu"), "cpu", "tiny", [warned]))
    args = ["preflight", "--hardware", "--no-pipeline", f"--data-dir={tmp_path}"]
    assert main(args) == 0
    assert main(args + ["--fail-on", "warn"]) == 1
    assert "[WARN] persistence" in capsys.readouterr().out


def test_pytest_bench_preflight_hardware_records_every_item(pytester):
    pytester.makepyfile(test_preflight=(ROOT / "bench" / "test_preflight.py").read_text())
    results = pytester.path / "results.json"
    result = pytester.runpytest("-m", "preflight", "-k", "hardware", "--burn-s=0.5", "-s",
                                f"--trainbench-results={results}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*measured matmul peak*", "*cpu*fp32*GFLOP/s*"])
    by = {r.config["check"]: r for r in load_results(results).records}
    assert set(by) == set(HARDWARE_ITEMS) | {"matmul_peak", "burn"}
    assert by["burn"].status == by["matmul_peak"].status == "passed"
    assert by["matmul_peak"].metrics["peak_fp32_flops_per_s"] > 0
