"""`trainbench preflight` as a user runs it (a subprocess), and `pytest bench/ -m preflight`
(pytester): the checklist, the exit code, and the results file with `kind: "preflight"`."""

import subprocess
import sys
from pathlib import Path

import pytest

from trainbench.cli import main
from trainbench.preflight import PIPELINE_ITEMS
from trainbench.records.results import load_results

pytestmark = pytest.mark.filterwarnings("ignore:'set_vital' is deprecated:UserWarning")

ROOT = Path(__file__).resolve().parents[2]
USER = str(ROOT / "tests" / "preflight" / "test_preflight_workloads.py")
GPU_ITEMS = ("cuda_driver", "gpu", "nccl", "bf16")


def trainbench(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "trainbench.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_preflight_on_this_cpu_machine_passes_with_gpu_items_not_applicable(tmp_path):
    results = tmp_path / "preflight.json"
    proc = trainbench("preflight", "--workload=gpt-small", f"--data-dir={tmp_path}", f"--results={results}")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr[-3000:]
    assert "Traceback" not in out + proc.stderr
    lines = {line.split("]")[1].split()[0]: line[:8] for line in out.splitlines() if line.startswith("  [")}
    for item in GPU_ITEMS:
        assert lines[item] == "  [n/a ]", out
    assert lines["memory"] == "  [n/a ]"  # no device memory on a CPU
    for item in PIPELINE_ITEMS:
        assert lines[item] == "  [pass]", out
    assert "0 fail" in out

    res = load_results(results)
    assert res.environment["gpu_profile"] == "cpu"
    recs = {r.config["check"]: r for r in res.records}
    assert set(recs) == set(lines)
    assert {r.kind for r in res.records} == {"preflight"}
    for item in PIPELINE_ITEMS:
        r = recs[item]
        assert (r.status, r.workload, r.config["result"], r.size) == ("passed", "gpt-small", "pass", "tiny")
    assert recs["gpu"].status == "skipped" and recs["gpu"].config["result"] == "n/a"
    assert recs["overfit"].metrics["loss_last"] < recs["overfit"].metrics["loss_first"]
    assert recs["checkpoint_save"].metrics["checkpoint_bytes"] > 0


def test_user_workload_from_a_plugin_file_is_checked_and_its_defect_fails_the_run(tmp_path):
    results = tmp_path / "r.json"
    proc = trainbench("preflight", f"--plugin={USER}", "--workload=pf-unsaved-buffer", "--no-read-probe",
                      f"--data-dir={tmp_path}", f"--results={results}")
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert "[FAIL] checkpoint_save  buffer(s) scale changed during training" in proc.stdout
    recs = [r for r in load_results(results).records if r.kind == "preflight"]
    failed = {(r.workload, r.config["check"]) for r in recs if r.status == "failed"}
    assert failed == {("pf-unsaved-buffer", "checkpoint_save"), ("pf-unsaved-buffer", "next_loss")}
    passed = {r.config["check"] for r in recs if r.config["group"] == "pipeline" and r.status == "passed"}
    assert passed == set(PIPELINE_ITEMS) - {"checkpoint_save", "next_loss"}


@pytest.mark.parametrize("args, message", [
    (["--workload=resnet51"], "unknown workload --workload=resnet51; known: bert-base, gpt-small, llama-1b, resnet50"),
    (["--plugin=no_such_module_xyz"], "--plugin=no_such_module_xyz: cannot import it"),
    (["--data-dir=/no/such/dir"], "--data-dir=/no/such/dir: no such directory"),
])
def test_bad_input_exits_2_with_the_fix_and_no_traceback(args, message, capsys):
    assert main(["preflight", "--no-pipeline", "--no-read-probe", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_pytest_bench_preflight_records_the_checklist(pytester):
    pytester.makeconftest(f"import sys; sys.path.insert(0, {str(ROOT / 'tests' / 'preflight')!r})\n"
                          "from test_preflight_workloads import pytest_trainbench_register_workloads\n")
    pytester.makepyfile(test_preflight=(ROOT / "bench" / "test_preflight.py").read_text())
    results = pytester.path / "results.json"
    # the hardware tier (test_preflight_hardware) has its own tests: tests/preflight/test_preflight_hardware_cli.py
    result = pytester.runpytest("-m", "preflight", "-k", "not hardware", "--workload=pf-sum-loss",
                                f"--trainbench-results={results}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_preflight_pipeline?pf-sum-loss-fp32?*", "*AssertionError: grad_accum: 2 micro*",
                                 "*fix: accumulated gradients are 2x too small*"])
    recs = load_results(results).records
    assert {r.kind for r in recs} == {"preflight"}
    by = {(r.workload, r.config["check"]): r for r in recs}
    assert by[("pf-sum-loss", "grad_accum")].status == "failed"
    assert "sums over the batch" in by[("pf-sum-loss", "grad_accum")].config["fix"]
    assert all(by[("pf-sum-loss", item)].status == "passed" for item in PIPELINE_ITEMS if item != "grad_accum")
    assert by[(None, "gpu")].status == "skipped" and by[(None, "torch")].status == "passed"
    assert by[("pf-sum-loss", "overfit")].test.endswith("test_preflight_pipeline[pf-sum-loss-fp32]::overfit")
