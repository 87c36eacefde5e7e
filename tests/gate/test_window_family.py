"""A gate judges hundreds of metrics at once: its false-alarm rate is for the whole gate
(Bonferroni over the metrics with a measured spread), and a metric's spread is pooled with the
median of its kind (nine runs can make one of a hundred spreads far too small by chance)."""

import math
import random
from pathlib import Path

import pytest

from results_factory import CPU_ENV, training
from trainbench.gate.verdict import REGRESSION
from trainbench.gate.window import compare_window
from trainbench.records.results import Results


def _run(rng: random.Random, benches: int, drift: float, slow: dict[int, float] | None = None) -> Results:
    records = []
    for i in range(benches):
        step = 0.01 * math.exp(rng.gauss(0, drift)) * (slow or {}).get(i, 1.0)
        records.append(training(f"bench/test_x.py::test_x[{i}]", step_s=step, seed=i))
    return Results(dict(CPU_ENV), records, Path(f"run-{rng.random():.6f}.json"))


def _flagged(c) -> set[int]:
    return {int(b.current.test.split("[")[1][:-1]) for b in c.benches if b.has(REGRESSION)}


def test_identical_code_over_many_metrics_is_flagged_at_about_the_family_rate():
    rng = random.Random(7)
    gates_with_a_regression, per_metric_alarms = 0, 0
    for _ in range(30):
        window = [_run(rng, 60, 0.10) for _ in range(9)]
        current = _run(rng, 60, 0.10)
        c = compare_window(window, current, alpha=0.01)
        assert c.family >= 120 and c.alpha_per_metric == 0.01 / c.family  # samples/s, step time per bench
        gates_with_a_regression += bool(_flagged(c))
        per_metric_alarms += bool(_flagged(compare_window(window, current, alpha=0.01 * c.family)))
    print(f"{gates_with_a_regression} of 30 gates flagged at 1% per gate, {per_metric_alarms} at 1% per metric")
    assert gates_with_a_regression <= 2, gates_with_a_regression  # ~1% expected of 30 gates
    assert per_metric_alarms >= gates_with_a_regression + 4, per_metric_alarms  # 1% per metric cries wolf


def test_a_real_slowdown_is_still_caught_beside_a_hundred_quiet_metrics():
    rng = random.Random(3)
    caught = 0
    for _ in range(20):
        window = [_run(rng, 60, 0.03) for _ in range(9)]
        caught += _flagged(compare_window(window, _run(rng, 60, 0.03, slow={5: 1.6}))) == {5}
    assert caught >= 19, caught


def test_a_spread_too_small_by_chance_is_pooled_with_its_kinds_median():
    rng = random.Random(11)
    window = [_run(rng, 12, 0.20) for _ in range(9)]
    for i, res in enumerate(window):  # bench 0: nearly identical in every baseline run
        rec = res.records[0]
        rec.metrics["samples_per_s"] = 1600.0 * (1 + 0.001 * i)
        rec.metrics["step_time_median_s"] = 0.01 / (1 + 0.001 * i)
    current = _run(rng, 12, 0.20)
    current.records[0].metrics.update(samples_per_s=1600.0 * 0.6, step_time_median_s=0.01 / 0.6)
    c = compare_window(window, current)
    bench0 = next(b for b in c.benches if b.current.test.endswith("[0]"))
    tput = next(m for m in bench0.metrics if m.metric.key == "samples_per_s")
    s = tput.spread
    assert s.own < 0.01 and s.prior > 0.15 and s.spread == pytest.approx(((s.own**2 + s.prior**2) / 2) ** 0.5)
    assert tput.verdict != REGRESSION  # -40% is inside the band of a kind whose runs move +-20%
