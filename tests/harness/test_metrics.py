"""Metric arithmetic, by hand and as properties."""

import math

import pytest
from hypothesis import given, strategies as st

from trainbench.metrics import mfu, stall_ratio, step_time_stats

durations = st.lists(st.floats(1e-4, 10.0), min_size=1, max_size=50)


def test_step_time_stats_by_hand():
    s = step_time_stats([0.1, 0.2, 0.3, 0.4, 0.5])
    assert s["step_time_median_s"] == pytest.approx(0.3)
    assert s["step_time_p10_s"] == pytest.approx(0.14)
    assert s["step_time_p90_s"] == pytest.approx(0.46)
    assert s["steps_measured"] == 5


@given(durations, st.data())
def test_stall_ratio_is_a_fraction_of_the_window(steps, data):
    waits = [data.draw(st.floats(0, t)) for t in steps]
    r = stall_ratio(waits, steps)
    assert 0 <= r <= 1
    assert r == pytest.approx(min(1.0, sum(waits) / sum(steps)))


def test_stall_ratio_by_hand():
    assert stall_ratio([0.05, 0.05], [0.1, 0.1]) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        stall_ratio([0.0], [0.0])


@given(st.floats(1e6, 1e16), st.floats(1e9, 1e16))
def test_mfu_is_the_ratio_and_na_without_a_peak(flops, peak):
    assert mfu(flops, peak) == pytest.approx(flops / peak)
    assert mfu(flops, None) is None
    assert math.isfinite(mfu(flops, peak))
