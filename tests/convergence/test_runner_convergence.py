"""The train-to-target runner on tiny models: approaches the floor from above, records a
curve, and a recipe that cannot train is "not reached" -- a result, not an error."""

import math

import pytest
import torch

from trainbench.convergence.runner import ConvergenceConfig, train_to_target
from trainbench.convergence.summary import cv, dollars_to_target, olympic_mean, summarize
from trainbench.convergence.tasks import task_for
from trainbench.harness.run import RunConfig
from trainbench.workloads import get_workload


@pytest.fixture(autouse=True)
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)  # a loaded 2-core box: two OpenMP threads per process thrash
    yield
    torch.set_num_threads(old)


def test_tiny_gpt_approaches_floor_from_above():
    task = task_for(get_workload("gpt-small"), "tiny")
    run = train_to_target(RunConfig("gpt-small", device="cpu"), ConvergenceConfig(max_steps=600), task)
    losses = [c["eval_loss"] for c in run.curve]
    assert run.reached, run.reason
    assert all(x > task.floor * 0.98 for x in losses)  # never below the floor (held-out noise ~1%)
    assert losses[0] - task.floor > 5 * (losses[-1] - task.floor)  # the gap closed
    assert losses[-1] <= task.floor * 1.10
    assert run.steps == run.curve[-1]["step"] and run.samples == run.steps * 8


def test_lr_100x_is_not_reached_with_its_curve():
    run = train_to_target(RunConfig("gpt-small", device="cpu"), ConvergenceConfig(max_steps=100, lr_scale=100.0))
    assert not run.reached
    assert run.reason.startswith("not reached")
    assert len(run.curve) >= 1 and all("eval_loss" in c for c in run.curve)
    metrics, message = summarize([run], 1.0, 1.1)
    assert metrics["time_to_target_s"] is None and message.startswith("not reached")


def test_olympic_mean_and_cv():
    assert olympic_mean([1, 2, 3, 4, 100]) == 3
    assert olympic_mean([2, 4]) == 3
    assert cv([1.0]) is None
    assert cv([1.0, 3.0]) == pytest.approx(math.sqrt(2) / 2)


def test_dollars_to_target_uses_the_profile_price():
    from trainbench.catalog.prices import load_prices

    usd, basis = dollars_to_target(3600.0, "t4", 1, load_prices())
    assert usd is not None and usd > 0 and "USD/GPU-h" in basis
    assert dollars_to_target(3600.0, "cpu", 1, [])[0] is None
    assert dollars_to_target(None, "t4", 1, [])[1] == "n/a: target not reached"
