"""The window gate's arithmetic: spread, noise band, verdict rule (hypothesis and seeded trials)."""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trainbench.gate.metrics import GATED_METRICS
from trainbench.gate.spread import MIN_RUNS, detectable_move, measure_spread
from trainbench.gate.thresholds import Threshold
from trainbench.gate.verdict import IMPROVEMENT, INSUFFICIENT, REGRESSION, SUSPICIOUS, WITHIN_NOISE, classify
from trainbench.gate.window import _judge

THROUGHPUT = GATED_METRICS.get("samples_per_s")
STEP_TIME = GATED_METRICS.get("step_time_median_s")


@given(st.floats(-2, 2), st.floats(0.001, 0.5), st.one_of(st.none(), st.floats(-50, 50)))
def test_only_a_move_beyond_threshold_and_band_is_a_regression(worse, threshold, noise_move):
    v = classify(worse, threshold, noise_move)
    assert (v == REGRESSION) == (worse > threshold and noise_move is not None and noise_move > 1)
    assert (v == INSUFFICIENT) == (abs(worse) > threshold and noise_move is None)
    if abs(worse) <= threshold:
        assert v == WITHIN_NOISE
    if v == SUSPICIOUS:
        assert worse > threshold and noise_move <= 1
    if v == IMPROVEMENT:
        assert worse < -threshold and noise_move < -1


@given(st.lists(st.floats(0.5, 2.0), min_size=MIN_RUNS, max_size=20), st.floats(0.1, 100))
def test_spread_is_relative_scale_free(values, scale):
    a, b = measure_spread(values, 0.01), measure_spread([v * scale for v in values], 0.01)
    assert a.spread == pytest.approx(b.spread, abs=1e-9) and a.band == pytest.approx(b.band, abs=1e-9)
    assert b.center == pytest.approx(a.center * scale)


def test_fewer_than_min_runs_is_not_measured():
    s = measure_spread([1.0, 1.1], 0.01)
    assert s.runs == 2 and s.spread is None and s.band is None and detectable_move(s, True) is None


def test_band_is_the_student_t_prediction_bound():
    from scipy.stats import t

    vals = [100.0, 103.0, 98.0, 101.0, 97.0]
    s = measure_spread(vals, 0.05)
    logs = [math.log(v) for v in vals]
    mean = sum(logs) / 5
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 4)
    assert s.band == pytest.approx(t.ppf(0.95, 4) * sd * math.sqrt(1.2))
    assert detectable_move(s, True) == pytest.approx(1 - math.exp(-s.band))
    assert detectable_move(s, False) == pytest.approx(math.exp(s.band) - 1)


def _run(rng, drift, slow=1.0):
    return 1000.0 / slow * math.exp(rng.gauss(0, drift))


@pytest.mark.parametrize("drift", [0.02, 0.10, 0.20])
def test_reruns_of_one_code_are_almost_never_a_regression(drift):
    # 9-run window, default 5% threshold, false-alarm rate 1%: whatever the drift, reruns stay quiet
    rng = random.Random(int(drift * 100))
    regressions = 0
    for _ in range(2000):
        window = [_run(rng, drift) for _ in range(9)]
        regressions += _judge(THROUGHPUT, window, _run(rng, drift), Threshold(0.05), 0.01).verdict == REGRESSION
    assert regressions / 2000 <= 0.02, regressions


def test_a_30_percent_slowdown_is_caught_on_a_3_percent_noise_runner():
    rng = random.Random(1)
    caught = sum(_judge(THROUGHPUT, [_run(rng, 0.03) for _ in range(9)], _run(rng, 0.03, slow=1.3),
                        Threshold(0.05), 0.01).verdict == REGRESSION for _ in range(500))
    assert caught >= 495


def test_direction_and_identical_baselines():
    same = [0.01] * 4
    assert _judge(STEP_TIME, same, 0.012, Threshold(0.05), 0.01).verdict == REGRESSION  # slower step time
    assert _judge(STEP_TIME, same, 0.008, Threshold(0.05), 0.01).verdict == IMPROVEMENT
    assert _judge(THROUGHPUT, same, 0.0102, Threshold(0.05), 0.01).verdict == WITHIN_NOISE
    assert _judge(THROUGHPUT, [0.01], 0.005, Threshold(0.05), 0.01).verdict == INSUFFICIENT
    stall = GATED_METRICS.get("stall_ratio")
    pp = _judge(stall, [0.10, 0.11, 0.10], 0.30, Threshold(0.05, absolute=True), 0.01)
    assert pp.verdict == REGRESSION and pp.spread.absolute and pp.worse_by == pytest.approx(0.20)
