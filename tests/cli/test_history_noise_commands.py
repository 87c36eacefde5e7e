"""`trainbench history` and `trainbench noise` on directories of results files: the report files,
one chart per metric, the step located at its commit, and bad input as one line, exit 2."""

import random

import pytest

from results_factory import CPU_ENV, GPU_ENV, training, write
from trainbench.cli import main

GPT = "bench/test_training.py::test_training[gpt-small-fp32]"


def _nightlies(folder, n=8, slow_from=5, slowdown=1.15, one_commit=False):
    folder.mkdir()
    rng = random.Random(5)
    for i in range(n):
        commit = "samecommit" if one_commit else f"commit{i:02d}"
        env = dict(CPU_ENV, start_time=f"2026-11-{10 + i:02d}T02:00:00+00:00", git_commit=commit)
        slow = slowdown if i >= slow_from else 1.0
        # file names out of time order: the series is ordered by start time, not by name
        write(folder / f"{(7 * i) % n:02d}.json", env, [
            training(step_s=0.010 * slow * (1 + rng.gauss(0, 0.01)), seed=i),
            training(GPT, workload="gpt-small", step_s=0.02 * (1 + 0.004 * (-1) ** i), seed=50 + i)])  # flat
    return folder


def test_history_writes_md_and_html_with_a_chart_per_metric(tmp_path, capsys):
    runs = _nightlies(tmp_path / "nightly")
    out = tmp_path / "report"
    assert main(["history", str(runs), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "resnet50-fp32]: samples/s regressed at commit commit05 by -1" in printed
    assert "gpt-small" not in printed.split("runs,")[0]  # the unchanged benchmark has no step
    md, html = (out / "history.md").read_text(), (out / "history.html").read_text()
    # 2 benchmarks x 4 metrics with numbers (samples/s, step time, peak memory, stall ratio)
    assert html.count("<img ") == 8 and md.count("![") == 8 and len(list((out / "charts").glob("*.png"))) == 8
    assert "## Detected steps" in md and "(runs 5..7)" in md


def test_a_step_between_runs_of_one_commit_is_not_called_a_code_change(tmp_path, capsys):
    runs = _nightlies(tmp_path / "nightly", one_commit=True)
    assert main(["history", str(runs), "--out", str(tmp_path / "report")]) == 0
    printed = capsys.readouterr().out
    assert "samples/s regressed at run 5, commit samecommit like the run before (not a code change)" in printed


def test_noise_prints_spread_and_smallest_catchable_regression(tmp_path, capsys):
    runs = _nightlies(tmp_path / "same", slow_from=99)
    assert main(["noise", str(runs)]) == 0
    out = capsys.readouterr().out
    assert "smallest catchable regression" in out and "8 runs" in out
    row = next(line for line in out.splitlines() if "gpt-small" in line and "samples/s" in line)
    assert "| 8 " in row and "±" in row


def _other_schema(folder):
    folder.mkdir()
    (folder / "a.json").write_text('{"schema": "trainbench-results/0", "environment": {}, "records": []}')
    return folder / "a.json", "schema"


def _mixed_profiles(folder):
    _nightlies(folder, n=5)
    bad = write(folder / "zz.json", dict(GPU_ENV, start_time="2026-11-30T00:00:00+00:00"), [training(gpu="h100-80g")])
    return bad, "gpu_profile"


def _empty(folder):
    folder.mkdir()
    return folder, "holds no results files"


def _too_few(folder):
    _nightlies(folder, n=3)
    return folder / "00.json", "at least 5 results files"


@pytest.mark.parametrize("make", [_other_schema, _mixed_profiles, _empty, _too_few])
@pytest.mark.parametrize("command", ["history", "noise", "gate"])
def test_bad_input_is_one_line_naming_the_file(tmp_path, capsys, make, command):
    folder = tmp_path / "runs"
    named, expected = make(folder)
    if command == "noise" and make is _too_few:
        pytest.skip("3 runs are enough for noise")
    args = {"history": ["history", str(folder), "--out", str(tmp_path / "o")], "noise": ["noise", str(folder)],
            "gate": ["gate", "--baseline", str(folder), "--current", str(named)]}[command]
    if command == "gate" and make is _too_few:
        pytest.skip("the gate takes any window size")
    rc = main(args)
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert str(named) in err and expected in err
