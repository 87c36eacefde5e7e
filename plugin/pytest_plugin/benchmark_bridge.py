"""Hand our measured step times to pytest-benchmark, so `--benchmark-json`, `--benchmark-autosave`,
`--benchmark-compare` and `--benchmark-compare-fail` work on training benchmarks.

Why not `benchmark.pedantic(step)`: pytest-benchmark times each call with a host timer, which on
a GPU would need a device synchronization after every step -- that removes the CPU run-ahead a
real training loop has and turns input waits into idle time. So the harness measures (CUDA
events on GPUs) and this module records those durations as the rounds of the fixture's stats,
one round per optimizer step, through `BenchmarkFixture._make_stats` (pytest-benchmark 5.x; no
public API takes external durations). The version pin in pyproject and
tests/pytest_plugin/test_benchmark_bridge.py guard it.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import TrainbenchError

__all__ = ["feed_benchmark"]


def feed_benchmark(benchmark: Any, step_times_s: Sequence[float], extra_info: Mapping[str, Any]) -> None:
    if benchmark is None or getattr(benchmark, "disabled", True):
        return
    make_stats = getattr(benchmark, "_make_stats", None)
    if make_stats is None:
        raise TrainbenchError(
            "this pytest-benchmark version has no BenchmarkFixture._make_stats; "
            "install pytest-benchmark>=5,<6 (pip install 'pytest-benchmark>=5,<6')"
        )
    benchmark._mode = "pytest-trainbench"  # the fixture counts as used, once
    stats = make_stats(1)  # one iteration per round: a round is one optimizer step
    for t in step_times_s:
        stats.update(t)
    benchmark.extra_info.update({k: v for k, v in extra_info.items() if _jsonable(v)})


def _jsonable(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str))
