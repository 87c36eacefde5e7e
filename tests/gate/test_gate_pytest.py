"""`pytest --trainbench-baseline PATH` (files, a directory, repeated): the session gates itself (pytester, as users run it)."""

import json

import pytest

from trainbench.records.results import load_results

BENCH = """
def test_training(trainbench):
    trainbench.train("resnet50")
"""
FAST = ["--steps=5", "--warmup=1", "-p", "no:cacheprovider", "-p", "no:benchmark"]


@pytest.fixture
def first_run(pytester):
    """One real session; its results file, to derive baselines from."""
    pytester.makepyfile(test_bench=BENCH)
    out = pytester.path / "first.json"
    pytester.runpytest(*FAST, f"--trainbench-results={out}").assert_outcomes(passed=1)
    return json.loads(out.read_text())


def _baseline(pytester, doc, speed: float, **env):
    """The run, `speed` x as fast (step times / speed), with environment entries replaced."""
    doc = json.loads(json.dumps(doc))
    doc["environment"].update(env)
    for rec in doc["records"]:
        rec["step_times_s"] = [t / speed for t in rec["step_times_s"]]
        for key in ("samples_per_s", "tokens_per_s"):
            if rec["metrics"].get(key):
                rec["metrics"][key] *= speed
        rec["metrics"]["step_time_median_s"] /= speed
    path = pytester.path / f"baseline-{speed}.json"
    path.write_text(json.dumps(doc))
    return path


def test_regression_fails_the_session_with_a_table(pytester, first_run):
    # three baseline runs ~20x faster, 2% apart: beyond any noise here, and a measured spread
    bases = [_baseline(pytester, first_run, speed=s) for s in (20.0, 19.6, 20.4)]
    result = pytester.runpytest(*FAST, *(f"--trainbench-baseline={b}" for b in bases), "--trainbench-results=cur.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1)  # the test itself passed; the gate failed the session
    result.stdout.fnmatch_lines([
        "*trainbench gate: FAILED*",
        "PerformanceRegression: 1 of 1 benchmarks regressed against 3 baseline runs (*baseline-*.json ...)*",
        "*| benchmark *| metric *|*",
        "*test_bench.py::test_training*| samples/s *| regression |",
    ])
    assert load_results(pytester.path / "cur.json").records  # results still written

    # the same three runs as a directory; one of them alone cannot measure the spread
    folder = pytester.path / "window"
    folder.mkdir()
    for b in bases:
        b.rename(folder / b.name)
    result = pytester.runpytest(*FAST, f"--trainbench-baseline={folder}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result = pytester.runpytest(*FAST, f"--trainbench-baseline={folder / 'baseline-20.0.json'}")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*trainbench gate: passed (1 benchmarks vs 1 baseline run(s))*"])


def test_faster_than_baseline_passes_other_environment_refused_unless_allowed(pytester, first_run):
    base = _baseline(pytester, first_run, speed=0.05)
    result = pytester.runpytest(*FAST, f"--trainbench-baseline={base}",
                                "--trainbench-max-regression=throughput=10%,peak_mem=off")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*trainbench gate: passed (1 benchmarks vs 1 baseline run(s))*"])

    other = _baseline(pytester, first_run, speed=0.05, torch="1.0.0", cpu_count=64)
    result = pytester.runpytest(*FAST, f"--trainbench-baseline={other}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*trainbench gate: error*", "*| torch *| 1.0.0 *",
                                 "ERROR: *another environment (torch differ)*"])
    # (in-process pytester sessions share one process whose RSS grows: memory not gated here)
    result = pytester.runpytest(*FAST, f"--trainbench-baseline={other}", "--trainbench-allow-env-mismatch",
                                "--trainbench-max-regression=peak_mem=off")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*trainbench gate: passed*", "environment differs: torch: baseline '1.0.0'*",
                                 "environment differs: cpu_count: baseline 64*"])


@pytest.mark.parametrize("content, expected", [
    ("{not json", "*--trainbench-baseline: results file *bad.json: not valid JSON*"),
    ('{"schema": "trainbench-results/7", "environment": {}, "records": []}', "*bad.json: schema 'trainbench-results/7'*"),
])
def test_bad_baseline_is_a_usage_error_before_any_benchmark(pytester, content, expected):
    pytester.makepyfile(test_bench=BENCH)
    (pytester.path / "bad.json").write_text(content)
    result = pytester.runpytest_subprocess(*FAST, "--trainbench-baseline=bad.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])
    assert "Traceback" not in result.stderr.str()
    assert not (pytester.path / "reports").exists()  # nothing ran, nothing written
    assert (pytester.path / "bad.json").read_text() == content


def test_bad_threshold_is_a_usage_error(pytester):
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest_subprocess("--trainbench-max-regression=speed=5%")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--trainbench-max-regression*unknown metric 'speed'*throughput*"])


def test_baseline_without_these_benchmarks_is_a_usage_error(pytester, first_run):
    doc = json.loads(json.dumps(first_run))
    for rec in doc["records"]:
        rec["test"] = "bench/elsewhere.py::test_other"
    (pytester.path / "other.json").write_text(json.dumps(doc))
    result = pytester.runpytest(*FAST, "--trainbench-baseline=other.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*trainbench gate: error*", "ERROR: no matching benchmarks between baseline *other.json*"])


def test_options_in_pytest_help(pytester):
    result = pytester.runpytest("--help")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*--trainbench-baseline=PATH*", "*--trainbench-fail-on-suspicious*", "*--trainbench-max-regression=SPEC*",
                                 "*--trainbench-allow-env-mismatch*"])
