"""bench/gpu_check.sh is not broken: it parses, its dry run lists every GPU step with bounded
commands, and its registry-free install makes the project and its pytest plugin importable."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "gpu_check.sh"
STEPS = ["environment", "preflight", "preflight-hardware", "training", "storage", "resume",
         "harness-overhead", "telemetry"]


def _run(tmp_path, **env):
    full = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": sys.executable,
            "GPU_CHECK_SITE": str(tmp_path / "site"), **env}
    return subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=full, capture_output=True, text=True, timeout=120)


def test_script_parses():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0


def test_dry_run_lists_every_step_and_runs_nothing(tmp_path):
    p = _run(tmp_path, GPU_CHECK_DRY_RUN="1")
    assert p.returncode == 0, p.stderr
    summary = (tmp_path / "out" / "summary.tsv").read_text().splitlines()
    assert [line.split("\t")[0] for line in summary[1:]] == STEPS
    assert "--precision=bf16,fp16" in p.stdout and "--size=full" in p.stdout
    assert ",s3" not in p.stdout  # s3 joins the sweep only where s3fs and moto import
    assert not list((tmp_path / "out").glob("results-*.json"))


def test_offline_install_links_the_project_with_its_pytest_entry_point(tmp_path):
    p = _run(tmp_path, GPU_CHECK_ONLY="install", GPU_CHECK_FORCE_LINK="1")
    assert p.returncode == 0, p.stdout + p.stderr
    site = tmp_path / "site"
    probe = ("import importlib.metadata as m, trainbench, trainbench.models, trainbench.preflight.torch_wheels as w;"
             "print(trainbench.__file__); print(sorted(e.value for e in m.entry_points(group='pytest11')));"
             "print(w.published_wheels()[0].tag)")
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    first, eps, tag = out.stdout.splitlines()
    assert first.startswith(str(site)) and "trainbench.pytest_plugin.hooks" in eps and tag == "cu126"


def test_a_failed_step_is_reported_and_the_rest_still_run(tmp_path):
    # no GPU here: the telemetry step fails (NVML finds no handle) and the run says so
    p = _run(tmp_path, GPU_CHECK_ONLY="environment,telemetry")
    summary = dict(line.split("\t")[:2] for line in (tmp_path / "out" / "summary.tsv").read_text().splitlines()[1:])
    assert set(summary) == {"environment", "telemetry"}
    assert summary["telemetry"] != "0" and p.returncode == 1 and "FAILED: " in p.stdout
