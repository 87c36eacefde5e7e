"""Must-show 1: cost arithmetic by hand, property tests, and the Young/Daly interval against
the published worked values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings, strategies as st

from trainbench.catalog.prices import PriceRow
from trainbench.cost import (
    cost_for_record,
    cost_per_epoch,
    daly_interval,
    epoch_hours,
    expected_wall_time,
    spot_estimate,
    young_interval,
)
from trainbench.records.record import Record

prices = st.floats(min_value=0.01, max_value=200, allow_nan=False)
rates = st.floats(min_value=0.1, max_value=1e5, allow_nan=False)
samples = st.integers(min_value=1, max_value=10**8)
scales = st.floats(min_value=0.01, max_value=100, allow_nan=False)


def test_cost_by_hand():
    # ImageNet epoch at 1,000 img/s on one T4 at 0.526 USD/h:
    # 1,281,167 / 1,000 = 1,281.167 s = 0.355880 h -> 0.355880 x 0.526 = 0.187193 USD
    assert epoch_hours(1_281_167, 1_000) == pytest.approx(0.3558797, rel=1e-6)
    assert cost_per_epoch(1_281_167, 1_000, 0.526) == pytest.approx(0.1871927, rel=1e-6)
    # 8 GPUs together at 8,000 img/s, 3.43 USD per GPU-hour: 160.1459 s x 8 x 3.43 / 3600 = 1.2206674
    assert cost_per_epoch(1_281_167, 8_000, 3.43, gpus=8) == pytest.approx(1.2206674, rel=1e-6)


@settings(deadline=None)  # timing noise on a shared CPU must not fail arithmetic
@given(samples, rates, prices, scales)
def test_cost_is_linear_in_price(n, rate, price, k):
    assert cost_per_epoch(n, rate, price * k) == pytest.approx(k * cost_per_epoch(n, rate, price), rel=1e-9)


@settings(deadline=None)  # timing noise on a shared CPU must not fail arithmetic
@given(samples, rates, prices, scales)
def test_cost_is_inverse_in_throughput(n, rate, price, k):
    assert cost_per_epoch(n, rate * k, price) == pytest.approx(cost_per_epoch(n, rate, price) / k, rel=1e-9)


@settings(deadline=None)  # timing noise on a shared CPU must not fail arithmetic
@given(samples, rates, prices, st.integers(min_value=1, max_value=64))
def test_gpus_at_the_same_total_throughput_multiply_cost(n, rate, price, gpus):
    assert cost_per_epoch(n, rate, price, gpus) == pytest.approx(gpus * cost_per_epoch(n, rate, price), rel=1e-9)


def test_bad_inputs_raise():
    with pytest.raises(ValueError):
        epoch_hours(100, 0)
    with pytest.raises(ValueError):
        cost_per_epoch(100, 1.0, -1.0)


# Daly (2006), worked example: delta = 5 min
@pytest.mark.parametrize("mtbi_h, minutes", [(24, 117), (6, 57)])
def test_daly_interval_matches_published_values(mtbi_h, minutes):
    got = daly_interval(5 * 60, mtbi_h * 3600) / 60
    assert round(got) == minutes
    assert abs(got - minutes) < 0.5


def test_young_interval_by_hand():
    assert young_interval(300, 24 * 3600) == pytest.approx(7200)  # sqrt(2 x 300 x 86400) = 7200 s
    assert young_interval(300, 6 * 3600) == pytest.approx(3600)


def test_daly_interval_is_m_when_checkpoints_cost_more_than_2m():
    assert daly_interval(10_000, 1_000) == 1_000


@settings(max_examples=40, deadline=None)
@given(
    st.floats(min_value=1, max_value=3600),  # delta, s
    st.floats(min_value=600, max_value=7 * 86400),  # M, s
    st.floats(min_value=0, max_value=1800),  # R, s
)
def test_daly_interval_minimises_expected_wall_time(delta, mtbi, restart):
    if delta >= mtbi / 2:  # the expansion is for delta << M
        return
    best = daly_interval(delta, mtbi)
    wall = lambda t: expected_wall_time(1e6, t, delta, mtbi, restart)  # noqa: E731
    # the higher-order interval is at least as good as Young's and close to a fine-grid optimum
    assert wall(best) <= wall(young_interval(delta, mtbi)) * (1 + 1e-9)
    grid = min(wall(best * f) for f in [x / 100 for x in range(50, 200)])
    assert wall(best) <= grid * (1 + 1e-4)


@settings(deadline=None)  # timing noise on a shared CPU must not fail arithmetic
@given(st.floats(min_value=1, max_value=600), st.floats(min_value=3600, max_value=86400 * 7))
def test_expected_wall_time_exceeds_work_and_tends_to_it(delta, mtbi):
    work = 10 * 3600.0
    t = daly_interval(delta, mtbi)
    wall = expected_wall_time(work, t, delta, mtbi, 300)
    assert wall > work
    # with rare interruptions and instant checkpoints, spot time approaches the work itself
    assert expected_wall_time(work, 3600, 1e-6, 1e12, 0) == pytest.approx(work, rel=1e-5)


def test_spot_estimate_by_hand():
    # 1 h of work, delta 60 s, M 6 h, R 300 s, 0.4 USD/GPU-h on 8 GPUs
    est = spot_estimate(3600, 0.4, 8, 60, 6 * 3600, 300)
    m = 6 * 3600
    tau = daly_interval(60, m)
    wall = m * math.exp(300 / m) * math.expm1((tau + 60) / m) * 3600 / tau
    assert est.interval_s == pytest.approx(tau)
    assert est.wall_s == pytest.approx(wall)
    assert est.cost_usd == pytest.approx(wall / 3600 * 0.4 * 8)
    assert est.overhead == pytest.approx(wall / 3600 - 1)
    assert spot_estimate(3600, None, 1, 60, m, 300).cost_usd is None


class _W:
    epoch_samples = 1_281_167


ROWS = [
    PriceRow("aws", "r", "one", "t4", 1, 0.526, 0.2, "s"),
    PriceRow("gcp", "r", "cheap-but-suspect", "t4", 1, 0.1, 0.05, "s", flag="SUSPECT: test"),
    PriceRow("aws", "r", "eight", "a100-80g", 8, 27.44705, 8.6505, "s"),
]


def test_cost_for_record_uses_cheapest_unflagged_per_gpu_price():
    rec = Record(test="t", kind="training", workload="resnet50", gpu="t4", metrics={"samples_per_s": 1000.0})
    usd, desc = cost_for_record(rec, _W(), ROWS)
    assert usd == pytest.approx(0.1871927, rel=1e-6)
    assert "one" in desc and "measured" in desc
    rec2 = Record(test="t", kind="ddp", workload="resnet50", gpu="a100-80g", world_size=8,
                  metrics={"samples_per_s": 8000.0})
    usd2, _ = cost_for_record(rec2, _W(), ROWS)
    assert usd2 == pytest.approx(1_281_167 / 8000 / 3600 * 27.44705)  # per-GPU price x 8 GPUs
    spot, _ = cost_for_record(rec2, _W(), ROWS, spot=True)
    assert spot == pytest.approx(1_281_167 / 8000 / 3600 * 8.6505)


@pytest.mark.parametrize(
    "gpu, metrics, reason",
    [("cpu", {"samples_per_s": 5.0}, "CPU"), ("h200", {"samples_per_s": 5.0}, "no on-demand price for h200"),
     ("t4", {}, "samples_per_s"), (None, {"samples_per_s": 5.0}, "CPU")],
)
def test_cost_for_record_is_none_with_a_reason(gpu, metrics, reason):
    rec = Record(test="t", kind="training", workload="w", gpu=gpu, metrics=metrics)
    usd, desc = cost_for_record(rec, _W(), ROWS)
    assert usd is None and reason in desc


def test_fill_costs_sets_the_metric_and_its_basis():
    from trainbench.cost import fill_costs

    recs = [
        Record(test="a", kind="training", workload="resnet50", gpu="t4", metrics={"samples_per_s": 1000.0}),
        Record(test="b", kind="training", workload="resnet50", gpu="cpu", metrics={"samples_per_s": 10.0}),
        Record(test="c", kind="resume", workload="resnet50", gpu="t4", metrics={"ckpt_save_s": 1.0}),
    ]
    fill_costs(recs, ROWS)
    assert recs[0].metrics["cost_per_epoch_usd"] == pytest.approx(0.1871927, rel=1e-6)
    assert "0.526" in recs[0].config["cost_basis"]
    assert recs[1].metrics["cost_per_epoch_usd"] is None and "CPU" in recs[1].config["cost_basis"]
    assert "cost_per_epoch_usd" not in recs[2].metrics
