"""`trainbench fleet plan`: task YAMLs SkyPilot's own parser reads, and the catalog estimate."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import sky
from hypothesis import given, settings, strategies as st

from fleet_helpers import COMMIT, REPO, plan
from trainbench.cli import main
from trainbench.catalog.prices import packaged_prices
from trainbench.fleet.plan import PlanConfig, choose_candidates, total_usd


def _task(out, name):
    task = sky.Task.from_yaml(str(out / "tasks" / f"{name}.yaml"))
    (resources,) = task.resources
    return task, resources


def test_on_demand_yaml_loads_in_skypilot_with_accelerator_count_and_commands(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert plan(out, "--gpus", "t4,l4", "--clouds", "aws", "--workload", "resnet50") == 0
    task, res = _task(out, "tb-t4")
    assert res.accelerators == {"T4": 1} and res.use_spot is False and str(res.cloud) == "AWS"
    assert res.job_recovery is None and task.num_nodes == 1
    assert task.workdir == {"url": REPO, "ref": COMMIT}  # the pinned commit is what SkyPilot clones
    assert "pip install -q -e ." in task.setup
    run = task.run
    assert run.index("trainbench preflight --gpu=t4") < run.index("pytest bench/ --gpu=t4")
    assert '--trainbench-results="$OUT"' in run and "--workload=resnet50" in run
    assert 'RESULTS="$HOME/trainbench-results"' in run and not task.storage_mounts  # left for rsync
    _, l4 = _task(out, "tb-l4")
    assert l4.accelerators == {"L4": 1}
    for script in (task.setup, task.run):  # both are valid bash
        subprocess.run(["bash", "-n"], input=script, text=True, check=True)
    manifest = json.loads((out / "plan.json").read_text())
    assert [t["gpu"] for t in manifest["tasks"]] == ["t4", "l4"] and manifest["commit"] == COMMIT
    assert "estimated cost of the sweep: $" in capsys.readouterr().out


def test_spot_yaml_is_a_recoverable_managed_job_that_resumes_into_the_bucket(tmp_path):
    out = tmp_path / "sweep"
    assert plan(out, "--gpus", "a10g", "--spot", "--bucket", "s3://tb-results", "--name", "nov") == 0
    task, res = _task(out, "nov-a10g")
    assert res.accelerators == {"A10G": 1} and res.use_spot is True
    assert res.job_recovery == {"strategy": "EAGER_NEXT_REGION", "max_restarts_on_errors": 0}
    (mount,) = task.storage_mounts.items()
    assert mount[0] == "/trainbench-results" and mount[1].name == "tb-results"
    assert 'RESULTS="/trainbench-results/nov"' in task.run
    assert 'RESUME="--trainbench-resume=$OUT"' in task.run and "$RESUME" in task.run


def test_run_script_resumes_only_when_a_results_file_is_there(tmp_path):
    # the run script itself, with trainbench/python/timeout replaced by stubs that log their argv
    out = tmp_path / "sweep"
    assert plan(out, "--gpus", "t4", "--spot", "--bucket", "s3://b") == 0
    task, _ = _task(out, "tb-t4")
    bin_dir, results = tmp_path / "bin", tmp_path / "mnt"
    bin_dir.mkdir()
    log = tmp_path / "log"
    for tool in ("trainbench", "timeout"):
        (bin_dir / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\n')
        (bin_dir / tool).chmod(0o755)
    script = task.run.replace("/trainbench-results/tb", str(results))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run(["bash", "-c", script], env=env, check=True)
    first = log.read_text().splitlines()
    assert first[0] == f"trainbench preflight --gpu=t4 --results={results}/t4-preflight.json"
    assert "--trainbench-resume" not in first[1] and f"--trainbench-results={results}/t4.json" in first[1]
    (results / "t4.json").write_text("{}")  # what a preempted first attempt left
    log.unlink()
    subprocess.run(["bash", "-c", script], env=env, check=True)
    assert log.read_text().splitlines()[1].endswith(f"--trainbench-resume={results}/t4.json")


def test_multi_node_yaml_runs_torchrun_with_skypilot_rendezvous(tmp_path):
    out = tmp_path / "sweep"
    assert plan(out, "--gpus", "h100", "--clouds", "aws", "--nodes", "2", "--gpus-per-node", "8",
                "--topology", "default,no-p2p", "--workload", "gpt-small") == 0
    task, res = _task(out, "tb-h100")
    assert task.num_nodes == 2 and res.accelerators == {"H100": 8}
    run = task.run
    assert 'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)' in run
    torchruns = [line for line in run.splitlines() if "torchrun" in line]
    assert len(torchruns) == 4  # collectives + ddp, for each topology
    for line in torchruns:
        for part in ("--nnodes=$SKYPILOT_NUM_NODES", "--node-rank=$SKYPILOT_NODE_RANK",
                     "--nproc-per-node=$SKYPILOT_NUM_GPUS_PER_NODE", "--master-addr=$MASTER_ADDR"):
            assert part in line
    assert sum("env NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 torchrun" in line for line in torchruns) == 2
    assert any("ddp --workload gpt-small --size full --precision bf16" in line for line in torchruns)
    subprocess.run(["bash", "-n"], input=run, text=True, check=True)
    assert json.loads((out / "plan.json").read_text())["tasks"][0]["usd_per_hour"] == pytest.approx(55.04 * 2)


def _row(cloud, instance):
    (row,) = [r for r in packaged_prices() if r.cloud == cloud and r.instance_type == instance]
    return row


@settings(max_examples=30, deadline=None)
@given(setup=st.floats(0, 2), expected=st.floats(0.1, 10), nodes=st.integers(1, 4), spot=st.booleans())
def test_estimate_is_the_catalog_arithmetic(setup, expected, nodes, spot):
    cfg = PlanConfig(gpus=("t4", "l4"), clouds=("aws",), spot=spot, nodes=nodes, setup_hours=setup,
                     expected_hours=expected, max_hours=expected * 2)
    rows = [_row("aws", "g4dn.xlarge"), _row("aws", "g6.xlarge")]
    price = [r.spot_usd_per_hour if spot else r.on_demand_usd_per_hour for r in rows]
    estimate, cap = total_usd(choose_candidates(cfg, packaged_prices()))
    assert estimate == pytest.approx(sum(p * nodes * (setup + expected) for p in price))
    assert cap == pytest.approx(sum(p * nodes * (setup + 2 * expected) for p in price))


def test_default_sweep_estimate_matches_the_catalog(capsys, tmp_path):
    assert plan(tmp_path / "s") == 0
    out = capsys.readouterr().out
    # t4 aws 0.526, l4 gcp 0.70683, a10g aws 1.006, a100-80g gcp 2.94582, h100 aws 6.88 (unflagged first)
    expected = (0.526 + 0.70683 + 1.006 + 2.94582 + 6.88) * 1.25
    assert f"estimated cost of the sweep: ${expected:.2f}" in out


def test_cheapest_n_are_the_first_one_gpu_instances_of_selects_report(tmp_path, capsys):
    import results_factory as rf

    results = [rf.write(tmp_path / f"{g}.json", dict(rf.CPU_ENV, gpu_profile=g),
                        [rf.training(workload="resnet50", gpu=g, step_s=s, mem_kind="cuda_allocated")])
               for g, s in (("t4", 0.04), ("l4", 0.02))]
    assert main(["select", *map(str, results), "--size", "full", "--clouds", "aws", "--out", str(tmp_path / "r")]) == 0
    report = (tmp_path / "r" / "select.md").read_text()
    ranked = re.findall(r"^\| \d+ +\| aws [^|]+\| 1x ([\w-]+) +\|", report, re.M)
    expect = list(dict.fromkeys(ranked))[:3]
    out = tmp_path / "sweep"
    assert plan(out, "--cheapest", "3", "--clouds", "aws", "--results", *map(str, results)) == 0
    assert [t["gpu"] for t in json.loads((out / "plan.json").read_text())["tasks"]] == expect
    assert f"--cheapest=3: {', '.join(expect)} (select's estimate" in capsys.readouterr().out
    assert plan(tmp_path / "s2", "--cheapest", "2") == 2
    assert "--cheapest needs --results" in capsys.readouterr().err


def test_readme_sweep_costs_are_what_plan_prints(tmp_path, capsys):
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    table = readme.split("What the default sweep costs", 1)[1].split("\n\n", 2)[1]
    sweep = [line for line in table.splitlines() if line.startswith("| **sweep**")][0]
    on_demand, spot = (float(x) for x in re.findall(r"\*\*([\d.]+)\*\*", sweep))
    assert plan(tmp_path / "a") == 0
    assert f"estimated cost of the sweep: ${on_demand:.2f}" in capsys.readouterr().out
    assert plan(tmp_path / "b", "--spot", "--bucket", "s3://b") == 0
    assert f"estimated cost of the sweep: ${spot:.2f}" in capsys.readouterr().out
