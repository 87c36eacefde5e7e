"""Warm-up and measured window last at least their time floors, beyond their step counts, and
the record says which floors were used and how long the window really was."""

import pytest

from trainbench.harness.run import RunConfig, run


def test_window_runs_past_its_step_count_until_the_time_floor():
    out = run(RunConfig(workload="gpt-small", steps=2, warmup=1, batch_size=2, min_warmup_s=0.2, min_window_s=0.4))
    m = out.measurement
    assert m.wall_s >= 0.4 and m.warmup_s >= 0.2
    assert len(m.step_times_s) > 2 and len(m.losses) == len(m.step_times_s) == len(m.input_wait_s)
    assert m.samples == 2 * len(m.step_times_s)  # throughput counts every measured step
    assert m.warmup_steps >= 1


def test_no_floor_keeps_the_step_counts():
    m = run(RunConfig(workload="gpt-small", steps=3, warmup=0, batch_size=2)).measurement
    assert len(m.step_times_s) == 3 and m.warmup_steps == 0


def test_loss_buffer_grows_when_the_warmup_pace_underestimates(monkeypatch):
    import importlib

    measure_mod = importlib.import_module("trainbench.harness.measure")  # the module, not the function
    monkeypatch.setattr(measure_mod, "_capacity", lambda *a: 1)  # force the rare growth path
    m = run(RunConfig(workload="gpt-small", steps=1, warmup=1, batch_size=2, min_window_s=0.2)).measurement
    assert len(m.losses) == len(m.step_times_s) > 1 and all(x == x for x in m.losses)


BENCH = """
def test_training(trainbench):
    trainbench.train("gpt-small")
"""


def test_record_carries_the_floors_and_the_actual_window(pytester):
    import json

    pytester.makepyfile(test_bench=BENCH)
    out = pytester.path / "r.json"
    pytester.runpytest("--steps=2", "--warmup=1", "--min-warmup-s=0.1", "--min-window-s=0.3", "-p", "no:benchmark",
                       "-p", "no:cacheprovider", f"--trainbench-results={out}").assert_outcomes(passed=1)
    cfg = json.loads(out.read_text())["records"][0]["config"]
    assert cfg["min_warmup_s"] == 0.1 and cfg["min_window_s"] == 0.3
    assert cfg["window_s"] >= 0.3 and cfg["measured_steps"] >= 2 and cfg["warmup_s"] >= 0.1


@pytest.mark.parametrize("flag", ["--min-window-s=-1", "--min-warmup-s=soon"])
def test_bad_floor_is_a_usage_error(pytester, flag):
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest_subprocess(flag)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{flag.split('=')[0]}*"])


def test_bad_floor_in_the_environment_is_a_usage_error(pytester, monkeypatch):
    pytester.makepyfile(test_bench=BENCH)
    monkeypatch.setenv("TRAINBENCH_MIN_WINDOW_S", "long")
    result = pytester.runpytest_subprocess()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*$TRAINBENCH_MIN_WINDOW_S: expects a number*"])
