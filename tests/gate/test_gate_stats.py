"""The gate's statistics on synthetic step times (hypothesis): identical distributions pass,
a shift beyond the threshold fails, and each metric's good direction is honoured."""

import math

import pytest

from hypothesis import assume, given, settings, strategies as st

from trainbench.gate.compare import IMPROVEMENT, NOISE, REGRESSION, UNCHANGED, compare_metric
from trainbench.gate.metrics import GATED_METRICS
from trainbench.gate.stats import shift_test
from trainbench.gate.thresholds import Threshold

# Step times of a run: positive, a few percent of spread around a median, like a quiet runner.
medians = st.floats(min_value=1e-4, max_value=10.0)
noise = st.lists(st.floats(min_value=-0.02, max_value=0.02), min_size=8, max_size=40)
THRESHOLD = Threshold(0.05)


def _times(median, jitter):
    return [median * (1 + j) for j in jitter]


def _throughput_change(base, cur, threshold=THRESHOLD, key="samples_per_s"):
    # throughput from the median step time, as a 1-sample batch would give
    b = 1 / sorted(base)[len(base) // 2]
    c = 1 / sorted(cur)[len(cur) // 2]
    return compare_metric(GATED_METRICS.get(key), b, c, threshold, base, cur)


@settings(max_examples=60, deadline=None)
@given(medians, noise, st.randoms(use_true_random=False))
def test_identical_distributions_pass(median, jitter, rnd):
    base = _times(median, jitter)
    cur = list(base)
    rnd.shuffle(cur)  # the same steps in another order: the same distribution
    change = _throughput_change(base, cur)
    assert change.verdict == UNCHANGED
    assert change.test is not None and change.test.p_value > 0.05


@settings(max_examples=60, deadline=None)
@given(medians, noise, noise, st.floats(min_value=0.12, max_value=3.0))
def test_slower_beyond_threshold_is_a_throughput_regression(median, jb, jc, slowdown):
    base, cur = _times(median, jb), _times(median * (1 + slowdown), jc)
    change = _throughput_change(base, cur)
    assert change.verdict == REGRESSION
    assert change.test.p_value < 0.05 and change.worse_by > THRESHOLD.value


@settings(max_examples=60, deadline=None)
@given(medians, noise, noise, st.floats(min_value=0.12, max_value=0.8))
def test_faster_beyond_threshold_is_an_improvement_never_a_regression(median, jb, jc, speedup):
    base, cur = _times(median, jb), _times(median * (1 - speedup), jc)
    assert _throughput_change(base, cur).verdict == IMPROVEMENT


@settings(max_examples=60, deadline=None)
@given(medians, noise, noise, st.floats(min_value=0.12, max_value=1.0))
def test_direction_per_metric(median, jb, jc, slowdown):
    """The same slower step times are a regression for every time-derived metric, whichever
    way the metric itself moves: throughput/MFU/busbw down, step time/cost up."""
    base, cur = _times(median, jb), _times(median * (1 + slowdown), jc)
    ratio = (1 + slowdown)
    for key in ("samples_per_s", "tokens_per_s", "mfu", "busbw_gbps"):  # higher is better
        assert compare_metric(GATED_METRICS.get(key), 100.0, 100.0 / ratio, THRESHOLD, base, cur).verdict == REGRESSION
        # the metric going *up* with the same samples is no regression
        assert compare_metric(GATED_METRICS.get(key), 100.0, 100.0 * ratio, THRESHOLD, cur, base).verdict == IMPROVEMENT
    for key in ("step_time_median_s", "cost_per_epoch_usd"):  # lower is better
        assert compare_metric(GATED_METRICS.get(key), 1.0, ratio, THRESHOLD, base, cur).verdict == REGRESSION
        assert compare_metric(GATED_METRICS.get(key), ratio, 1.0, THRESHOLD, cur, base).verdict == IMPROVEMENT


@settings(max_examples=80, deadline=None)
@given(st.floats(min_value=1.0, max_value=1e12), st.floats(min_value=-0.9, max_value=2.0),
       st.floats(min_value=0.0, max_value=0.5))
def test_single_number_metrics_use_their_threshold_and_direction(base, change, limit):
    """Peak memory has no per-step samples: threshold only; more memory is worse."""
    assume(abs(abs(change) - limit) > 1e-9)  # away from the boundary (float rounding)
    m = compare_metric(GATED_METRICS.get("peak_mem_bytes"), base, base * (1 + change), Threshold(limit))
    assert m.test is None
    if abs(change) <= limit:
        assert m.verdict == UNCHANGED
    else:
        assert m.verdict == (REGRESSION if change > 0 else IMPROVEMENT)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0.0, max_value=0.5), st.floats(min_value=0.0, max_value=0.5))
def test_stall_ratio_in_percentage_points(base, cur):
    pp = Threshold(0.05, absolute=True)
    assume(abs(abs(cur - base) - 0.05) > 1e-9)
    m = compare_metric(GATED_METRICS.get("stall_ratio"), base, cur, pp)
    expected = UNCHANGED if abs(cur - base) <= 0.05 else (REGRESSION if cur > base else IMPROVEMENT)
    assert m.verdict == expected


def test_a_noisy_shift_beyond_threshold_is_noise_not_a_regression():
    """Medians 8% apart but the two runs overlap completely: the rank test cannot tell."""
    base = [1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0]
    cur = [1.0, 3.0, 1.16, 3.0, 1.0, 3.0, 1.16, 3.0]
    m = compare_metric(GATED_METRICS.get("samples_per_s"), 100.0, 92.0, THRESHOLD, base, cur)
    assert m.verdict == NOISE and m.test.p_value >= 0.05


def test_missing_values_are_na_never_zero():
    m = compare_metric(GATED_METRICS.get("mfu"), None, 0.4, THRESHOLD)
    assert m.verdict == "n/a" and m.relative is None and m.base is None
    assert compare_metric(GATED_METRICS.get("mfu"), math.nan, 0.4, THRESHOLD).verdict == "n/a"


def test_too_few_steps_gives_no_test():
    assert shift_test([1.0, 1.1], [2.0, 2.1, 2.2], slower=True) is None
    assert shift_test([1.0] * 5, [1.0] * 5, slower=True).p_value == 1.0


def test_false_alarm_rate_of_same_distribution_reruns_is_small():
    """500 pairs of runs drawn from one skewed step-time distribution (lognormal, 10% spread,
    20 steps each, seeded): how often does the 5% throughput gate cry regression?"""
    import numpy as np

    rng = np.random.default_rng(7)
    alarms = 0
    for _ in range(500):
        base, cur = (list(0.01 * rng.lognormal(0.0, 0.10, size=20)) for _ in range(2))
        alarms += _throughput_change(base, cur).verdict == REGRESSION
    assert alarms / 500 <= 0.01


def test_detection_rate_of_a_20_percent_slowdown_is_high():
    import numpy as np

    rng = np.random.default_rng(8)
    hits = 0
    for _ in range(200):
        base = list(0.01 * rng.lognormal(0.0, 0.10, size=20))
        cur = list(0.012 * rng.lognormal(0.0, 0.10, size=20))
        hits += _throughput_change(base, cur).verdict == REGRESSION
    assert hits / 200 >= 0.95


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0.0, max_value=0.5), noise, noise, st.floats(min_value=0.10, max_value=0.4))
def test_stall_ratio_judged_on_per_step_stall_fractions(level, jb, jc, shift):
    """Stall fractions per step (input wait / step time): more stall by over 5pp fails, the
    same steps in another order pass, less stall is an improvement."""
    base = [max(0.0, level + j) for j in jb]
    cur = [min(1.0, b + shift) for b in (max(0.0, level + j) for j in jc)]
    assume(sorted(cur)[len(cur) // 2] - sorted(base)[len(base) // 2] > 0.06)
    stall = GATED_METRICS.get("stall_ratio")
    pp = Threshold(0.05, absolute=True)
    mb, mc = (sorted(x)[len(x) // 2] for x in (base, cur))
    worse = compare_metric(stall, mb, mc, pp, base, cur)
    assert worse.verdict == REGRESSION and worse.test is not None
    assert compare_metric(stall, mc, mb, pp, cur, base).verdict == IMPROVEMENT
    same = list(reversed(base))
    assert compare_metric(stall, mb, mb, pp, base, same).verdict == UNCHANGED


def test_stall_samples_come_from_the_records_input_wait():
    from trainbench.gate.compare import _per_step
    from trainbench.records.record import Record

    rec = Record(test="t", kind="training", step_times_s=[0.1, 0.2, 0.4], config={"input_wait_s": [0.01, 0.1, 0.0]})
    assert _per_step(rec, "stall_fraction") == pytest.approx([0.1, 0.5, 0.0])
    rec.config["input_wait_s"] = [0.1]  # not one per step: no samples, threshold only
    assert _per_step(rec, "stall_fraction") is None
