"""`trainbench fleet launch`: the calls it makes through the launcher seam (no cloud here), and
a failed candidate leaving the others' plans and results intact."""

from __future__ import annotations

import hashlib
import json

import pytest

import trainbench.cli.fleet as fleet_cli
from fleet_helpers import FakeLauncher, plan
from trainbench.cli import main
from trainbench.fleet import launch_plan, read_plan


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*.yaml"))}


def test_launch_calls_sky_launch_for_on_demand_and_jobs_launch_for_spot(tmp_path, capsys):
    od, spot = tmp_path / "od", tmp_path / "spot"
    assert plan(od, "--gpus", "t4,l4") == 0
    assert plan(spot, "--gpus", "t4", "--spot", "--bucket", "gs://tb") == 0
    fake = FakeLauncher()
    launch_plan(od, read_plan(od), fake)
    launch_plan(spot, read_plan(spot), fake)
    # on-demand without a bucket: clusters stay up (autostop) for rsync; spot: managed jobs
    assert fake.calls == [("launch", "tb-t4.yaml", "tb-t4", False), ("launch", "tb-l4.yaml", "tb-l4", False),
                          ("jobs_launch", "tb-t4.yaml", "tb-t4")]
    assert json.loads((od / "launch.json").read_text())["tb-l4"] == {"status": "launched",
                                                                     "what": "cluster tb-l4, job 1"}


def test_a_failed_launch_leaves_the_other_candidates_plans_and_results_intact(tmp_path, monkeypatch, capsys):
    sweep = tmp_path / "sweep"
    assert plan(sweep, "--gpus", "t4,l4,a10g") == 0
    before = _digests(sweep), (sweep / "plan.json").read_text()
    remote = {"tb-t4": tmp_path / "t4-home", "tb-a10g": tmp_path / "a10g-home"}
    for name, folder in remote.items():
        folder.mkdir()
        (folder / f"{name[3:]}.json").write_text('{"schema": "x"}')
    fake = FakeLauncher(fail={"tb-l4"}, remote=remote)
    monkeypatch.setattr(fleet_cli, "make_launcher", lambda: fake)
    capsys.readouterr()
    assert main(["fleet", "launch", str(sweep)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("estimated cost of the sweep: $")  # said before anything is launched
    assert "tb-l4: launch FAILED (RuntimeError: no capacity for tb-l4)" in out
    assert "tb-t4: launched" in out and "tb-a10g: launched" in out  # the failure did not stop the sweep
    launches = json.loads((sweep / "launch.json").read_text())
    assert {k: v["status"] for k, v in launches.items()} == {"tb-t4": "launched", "tb-l4": "failed",
                                                             "tb-a10g": "launched"}
    assert (_digests(sweep), (sweep / "plan.json").read_text()) == before
    # retrying the failed one only touches its own entry
    fake.fail.clear()
    assert main(["fleet", "launch", str(sweep), "--only", "l4"]) == 0
    assert fake.calls[-1] == ("launch", "tb-l4.yaml", "tb-l4", False)
    assert json.loads((sweep / "launch.json").read_text())["tb-t4"] == launches["tb-t4"]
    # collect fetches what was launched; the results of the others are all there
    fake.remote["tb-l4"] = tmp_path / "l4-home"
    (tmp_path / "l4-home").mkdir()
    from trainbench.fleet.collect import fetch_results

    fake.fail = set()
    lines = fetch_results(sweep, read_plan(sweep), fake)
    assert [c for c in fake.calls if c[0] == "fetch"] == [("fetch", n, "~/trainbench-results")
                                                         for n in ("tb-t4", "tb-l4", "tb-a10g")]
    assert sorted(p.name for p in (sweep / "results").iterdir()) == ["a10g.json", "t4.json"]
    assert all("fetched" in line for line in lines)


def test_launch_without_skypilot_is_one_line_with_the_install_command(tmp_path, monkeypatch, capsys):
    sweep = tmp_path / "sweep"
    assert plan(sweep, "--gpus", "t4") == 0
    capsys.readouterr()
    monkeypatch.setitem(__import__("sys").modules, "sky", None)  # `import sky` now raises ImportError
    assert main(["fleet", "launch", str(sweep)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("trainbench fleet: error: SkyPilot is not installed; pip install 'pytest-trainbench[fleet]' "
                   "(then `sky check` to set up cloud credentials)")
    assert not (sweep / "launch.json").exists()


@pytest.mark.parametrize("argv, message", [
    (["--gpus", "t4,x100"], "argument --gpus: unknown value(s) x100; supported: t4, l4"),
    (["--gpus", "a10g", "--clouds", "gcp"],
     "--gpus=a10g: not offered by --clouds=gcp in the price catalog; add aws to --clouds or drop a10g"),
    (["--gpus", "a100-80g", "--clouds", "aws"],
     "--gpus=a100-80g: --clouds=aws offer it only as 8-GPU instances in the price catalog; pass --gpus-per-node 8"),
    (["--gpus", "h100", "--clouds", "aws", "--spot", "--bucket", "s3://b"],
     "--spot: no spot price for h100 on --clouds=aws in the price catalog; drop --spot or h100"),
    (["--gpus", "t4", "--spot"], "--spot: managed jobs' machines are gone when the job ends, so results need a bucket"),
    (["--clouds", "alibaba"], "argument --clouds: unknown value(s) alibaba; supported: aws, gcp, azure"),
    (["--bucket", "s3://b/sub"], "argument --bucket: expects s3://NAME or gs://NAME (a bucket, no path)"),
    (["--commit", "main"], "argument --commit: expects a commit id (7-40 hex digits"),
    (["--max-usd", "5"], "--max-usd=5: the plan's estimate is $15.08; raise --max-usd to at least 15.08 or drop "
                         "GPUs from --gpus (the dearest is h100, $8.60)"),
])
def test_bad_plan_input_is_one_line_naming_the_flag_exit_2_and_writes_nothing(tmp_path, capsys, argv, message):
    sweep = tmp_path / "sweep"
    assert plan(sweep, *argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not sweep.exists()


def test_the_real_launcher_calls_skypilots_sdk_with_its_own_signatures(tmp_path, monkeypatch):
    import inspect

    import sky

    from trainbench.fleet import Sky

    sweep = tmp_path / "sweep"
    assert plan(sweep, "--gpus", "t4") == 0
    assert plan(tmp_path / "spot", "--gpus", "t4", "--spot", "--bucket", "s3://b") == 0
    calls = []

    def recorder(real, name):
        def call(*args, **kwargs):
            bound = inspect.signature(real).bind(*args, **kwargs)  # TypeError if we misuse the SDK
            calls.append((name, {k: v for k, v in bound.arguments.items() if k != "task"}, args[0]))
            return f"request-{name}"
        return call

    monkeypatch.setattr(sky, "launch", recorder(sky.launch, "launch"))
    monkeypatch.setattr(sky.jobs, "launch", recorder(sky.jobs.launch, "jobs.launch"))
    monkeypatch.setattr(sky, "stream_and_get", lambda request: ([3], None) if "jobs" in request else (5, None))
    real = Sky()
    assert real.launch(sweep / "tasks" / "tb-t4.yaml", "tb-t4", down=False) == "cluster tb-t4, job 5"
    assert real.jobs_launch(tmp_path / "spot" / "tasks" / "tb-t4.yaml", "tb-t4") == "managed job tb-t4 [3]"
    (name, kwargs, task), (jname, jkwargs, jtask) = calls
    assert name == "launch" and kwargs == {"cluster_name": "tb-t4", "down": False, "idle_minutes_to_autostop": 30}
    assert isinstance(task, sky.Task) and list(task.resources)[0].accelerators == {"T4": 1}
    assert jname == "jobs.launch" and jkwargs == {"name": "tb-t4"} and list(jtask.resources)[0].use_spot
