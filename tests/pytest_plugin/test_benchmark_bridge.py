"""pytest-benchmark gets our measured step times through its private `_make_stats`: this guards
the private API the bridge relies on, and what a user then sees in --benchmark-json."""

import inspect
import json

from pytest_benchmark.fixture import BenchmarkFixture


def test_make_stats_still_takes_the_iteration_count():
    params = list(inspect.signature(BenchmarkFixture._make_stats).parameters)
    assert params[:2] == ["self", "iterations"]


def test_step_times_land_in_benchmark_json(pytester, tmp_path):
    pytester.makepyfile(test_b="""
        from trainbench.pytest_plugin.benchmark_bridge import feed_benchmark

        def test_steps(benchmark):
            feed_benchmark(benchmark, [0.010, 0.012, 0.011], {"samples_per_s": 123.0, "skip": [1]})
        """)
    out = tmp_path / "bench.json"
    result = pytester.runpytest_subprocess("--gpu=cpu", "-p", "no:cacheprovider", f"--benchmark-json={out}",
                                           "--trainbench-results", str(tmp_path / "r.json"))
    result.assert_outcomes(passed=1)
    (bench,) = json.loads(out.read_text())["benchmarks"]
    assert bench["stats"]["rounds"] == 3 and abs(bench["stats"]["median"] - 0.011) < 1e-12
    assert bench["extra_info"] == {"samples_per_s": 123.0}
