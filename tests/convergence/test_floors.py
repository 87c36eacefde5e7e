"""Known floors: the closed forms, a model that knows the generating process reaches them
within 1%, and a trained tiny model's held-out loss approaches them from above."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st
from torch.utils.data import DataLoader

from trainbench.convergence.floors import markov_entropy_rate, noisy_label_floor, stationary_distribution
from trainbench.convergence.tasks import MarkovTokens, NoisyImages, NoisyTokenClasses


def _batch(task, n, seed=7):
    return next(iter(DataLoader(task.dataset(n, seed), batch_size=n)))


def test_two_state_chain_matches_hand_computation():
    # P = [[1-a, a], [b, 1-b]]: pi = (b, a)/(a+b), H = pi0 h(a) + pi1 h(b)
    a, b = 0.2, 0.5
    succ = np.array([[0, 1], [1, 0]])
    prob = np.array([[1 - a, a], [1 - b, b]])
    pi = stationary_distribution(succ, prob)
    assert pi == pytest.approx([b / (a + b), a / (a + b)], abs=1e-10)
    h = lambda p: -p * math.log(p) - (1 - p) * math.log(1 - p)
    assert markov_entropy_rate(succ, prob) == pytest.approx(pi[0] * h(a) + pi[1] * h(b), rel=1e-10)


@given(st.floats(0.01, 0.9), st.integers(2, 1000))
def test_noisy_label_floor_is_the_posterior_entropy(eps, k):
    post = np.array([1 - eps] + [eps / (k - 1)] * (k - 1))
    assert noisy_label_floor(eps, k) == pytest.approx(float(-(post * np.log(post)).sum()), rel=1e-9)


def test_uniform_replacement_convention():
    # "replace with a uniform draw over all K with prob rho" is wrong at rate rho (K-1)/K
    rho, k = 0.3, 5
    post = np.array([1 - rho + rho / k] + [rho / k] * (k - 1))
    assert noisy_label_floor(rho * (k - 1) / k, k) == pytest.approx(float(-(post * np.log(post)).sum()))


# Label noise eps = 0.5 here: the per-sample loss then has a small spread, so 3 standard errors
# of the sample mean are < 1% of the floor at these n (at eps = 0.1 that takes ~400k samples).
@pytest.mark.parametrize("task, n", [
    (MarkovTokens(vocab=300, seq=64, states=64).task(), 1000),  # 64k predictions
    (NoisyImages(image_size=8, num_classes=10, eps=0.5).task(), 30000),  # SE 0.35% of the floor
    (NoisyTokenClasses(vocab=1000, seq=16, num_classes=3, eps=0.5).task(), 30000),  # SE 0.2%
])
def test_oracle_reaches_floor_within_one_percent(task, n):
    assert task.oracle_loss(_batch(task, n)) == pytest.approx(task.floor, rel=0.01)


def test_held_out_split_is_not_a_training_seed():
    from trainbench.convergence.tasks import HELD_OUT_SEED

    task = MarkovTokens(vocab=100, seq=8).task()
    assert not torch.equal(task.dataset(1, 0)[0]["tokens"], task.dataset(1, HELD_OUT_SEED)[0]["tokens"])
