"""`trainbench fleet collect`: results files of several runs -> the select report, those rows measured."""

from __future__ import annotations

import re

import results_factory as rf
import trainbench.cli.fleet as fleet_cli
from fleet_helpers import FakeLauncher, plan
from trainbench.cli import main
from trainbench.fleet import launch_plan, read_plan


def _run_on(folder, gpu, step_s, seed):
    """A results file as the run on `gpu` writes it (made on this CPU, labelled with the profile)."""
    env = dict(rf.CPU_ENV, gpu_profile=gpu, host=f"tb-{gpu}")
    record = rf.training(workload="resnet50", gpu=gpu, step_s=step_s, seed=seed, mem_kind="cuda_allocated")
    return rf.write(folder / f"{gpu}.json", env, [record])


def test_collect_fetches_each_cluster_and_marks_its_rows_measured(tmp_path, capsys, monkeypatch):
    sweep = tmp_path / "sweep"
    assert plan(sweep, "--gpus", "t4,l4,a10g", "--workload", "resnet50") == 0
    remote = {}
    for gpu, step_s, seed in (("t4", 0.04, 1), ("l4", 0.03, 2), ("a10g", 0.02, 3)):
        home = tmp_path / f"home-{gpu}"
        home.mkdir()
        _run_on(home, gpu, step_s, seed)
        remote[f"tb-{gpu}"] = home
    fake = FakeLauncher(remote=remote)
    launch_plan(sweep, read_plan(sweep), fake)
    monkeypatch.setattr(fleet_cli, "make_launcher", lambda: fake)
    capsys.readouterr()
    assert main(["fleet", "collect", str(sweep)]) == 0
    out = capsys.readouterr().out
    assert "tb-t4: fetched" in out and "tb-a10g: fetched" in out
    md = (sweep / "select.md").read_text()
    assert md in out and (sweep / "select.html").exists()
    for gpu in ("t4", "l4", "a10g"):
        # every instance of a GPU that ran is priced from its own measurement
        rows = [line for line in md.splitlines() if re.search(rf"\| \d+x {gpu} +\|", line)]
        assert rows and all(f"| measured on {gpu} " in line for line in rows), gpu
    assert "projected (" in md  # GPUs not in the sweep stay projections, labelled


def test_collect_no_fetch_reads_results_already_there(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    (sweep / "results").mkdir(parents=True)
    _run_on(sweep / "results", "t4", 0.04, 1)
    _run_on(sweep / "results", "l4", 0.03, 2)
    assert main(["fleet", "collect", str(sweep), "--no-fetch"]) == 0
    md = (sweep / "select.md").read_text()
    assert re.search(r"g4dn.xlarge +\| 1x t4 +\| measured on t4 +\| 400 ", md)
    assert re.search(r"g6.xlarge +\| 1x l4 +\| measured on l4 ", md)
    assert "measured on a10g" not in md


def test_collect_without_results_is_one_line(tmp_path, capsys):
    assert main(["fleet", "collect", str(tmp_path), "--no-fetch"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no results files" in err and len(err.splitlines()) == 1
    assert main(["fleet", "collect", str(tmp_path)]) == 2
    assert "no plan here; run `trainbench fleet plan" in capsys.readouterr().err


def test_bucket_results_are_copied_through_fsspec(tmp_path):
    import fsspec

    from trainbench.fleet.collect import _from_bucket

    fs = fsspec.filesystem("memory")
    fs.pipe({"/tb-bucket/nov/t4.json": b'{"a": 1}', "/tb-bucket/nov/l4.json": b'{"b": 2}',
             "/tb-bucket/other/h100.json": b"{}"})
    _from_bucket("memory://tb-bucket", "nov", tmp_path / "results")
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["l4.json", "t4.json"]
    assert (tmp_path / "results" / "t4.json").read_text() == '{"a": 1}'
