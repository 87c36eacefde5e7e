"""The steadiness flag: fires on a seeded noisy or drifting step-time series, not on a steady one,
and shows in the terminal summary."""

import random

from trainbench.records.record import Record
from trainbench.report.session_summary import summary_lines
from trainbench.steadiness import DRIFT_BOUND, SPREAD_BOUND, steadiness


def _series(n=40, noise=0.02, drift=0.0, seed=0):
    rng = random.Random(seed)
    return [0.1 * (1 + drift * i / (n - 1)) * (1 + noise * rng.uniform(-1, 1)) for i in range(n)]


def test_steady_series_is_steady():
    s = steadiness(_series(noise=0.05))
    assert s["steady"] is True and s["spread"] < SPREAD_BOUND and abs(s["drift"]) < DRIFT_BOUND


def test_noisy_series_is_flagged_by_spread():
    rng = random.Random(1)
    noisy = [0.1 * rng.choice([1.0, 1.0, 2.5]) for _ in range(40)]  # a neighbour steals the core now and then
    s = steadiness(noisy)
    assert s["steady"] is False and s["spread"] > SPREAD_BOUND and "p90/p10" in s["reason"]


def test_drifting_series_is_flagged_by_drift():
    s = steadiness(_series(noise=0.01, drift=0.35))  # slows down 35% over the window: throttling
    assert s["steady"] is False and s["drift"] > DRIFT_BOUND and "drift" in s["reason"]
    assert s["spread"] < SPREAD_BOUND  # the spread alone would not have caught it


def test_too_few_steps_is_no_verdict():
    assert steadiness([0.1, 0.3, 0.1])["steady"] is None


def test_summary_marks_the_unsteady_record():
    rng = random.Random(2)
    recs = [Record(test=f"b.py::test_training[{name}]", kind="training", workload="w",
                   metrics={"samples_per_s": 10.0, "step_time_median_s": 0.1}, step_times_s=times)
            for name, times in (("calm", _series()), ("noisy", [0.1 * rng.choice([1, 3]) for _ in range(30)]))]
    text = "\n".join(summary_lines(recs))
    calm = next(l for l in text.splitlines() if l.startswith("calm"))
    noisy = next(l for l in text.splitlines() if l.startswith("noisy"))
    assert calm.rstrip().endswith("ok") and noisy.rstrip().endswith("UNSTEADY")
    assert "1 record(s) UNSTEADY" in text and f"p90/p10 step time > {SPREAD_BOUND:g}" in text
