"""Closed-form loss floors of the synthetic convergence tasks (nats per prediction).

Markov token source (order 1, stationary start): every next-token prediction is conditioned on
the previous token only, so the best achievable mean cross-entropy is the entropy rate

    H = - sum_i pi_i sum_j P_ij log P_ij          (Cover & Thomas, Elements of Inf. Theory, 4.2)

with pi the stationary distribution (pi P = pi). Starting each window from pi makes every
position's conditional entropy exactly H, so no position needs a correction.

Noisy labels: the input determines the true class c exactly; the observed label is c with
probability 1 - eps and each of the other K - 1 classes with probability eps / (K - 1)
("flip to another class", eps = the rate at which the label is wrong). The Bayes posterior is
then (1 - eps, eps/(K-1), ...) and its expected cross-entropy is

    L* = -(1 - eps) log(1 - eps) - eps log(eps / (K - 1)).

Convention: if noise is instead "replace with a uniform draw over all K classes with
probability rho", the label is wrong with eps = rho (K - 1) / K; pass that eps here.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["stationary_distribution", "markov_entropy_rate", "noisy_label_floor"]


def stationary_distribution(succ: np.ndarray, prob: np.ndarray, tol: float = 1e-13,
                            max_iter: int = 100_000) -> np.ndarray:
    """pi with pi P = pi for the sparse chain P[i, succ[i, k]] = prob[i, k]; shapes (V, b).

    Power iteration on the sparse rows (a dense V x V matrix is 20 GB at GPT-2's vocabulary).
    The chains built here are irreducible and aperiodic (a self-loop and a ring edge per state),
    so the iteration converges to the unique pi.
    """
    v = succ.shape[0]
    pi = np.full(v, 1.0 / v)
    flat = succ.ravel()
    for _ in range(max_iter):
        nxt = np.bincount(flat, weights=(pi[:, None] * prob).ravel(), minlength=v)
        nxt /= nxt.sum()
        if np.abs(nxt - pi).sum() < tol:
            return nxt
        pi = nxt
    raise ValueError(f"stationary distribution did not converge in {max_iter} iterations")


def markov_entropy_rate(succ: np.ndarray, prob: np.ndarray) -> float:
    """H in nats per token (see the module docstring)."""
    pi = stationary_distribution(succ, prob)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(prob > 0, prob * np.log(prob), 0.0)
    return float(-(pi * plogp.sum(axis=1)).sum())


def noisy_label_floor(eps: float, num_classes: int) -> float:
    """Bayes-optimal cross-entropy with a label wrong at rate eps, uniformly over the others."""
    if num_classes < 2 or not 0.0 <= eps < 1.0:
        raise ValueError(f"need K >= 2 and 0 <= eps < 1, got K={num_classes}, eps={eps}")
    right = -(1 - eps) * math.log(1 - eps)
    wrong = -eps * math.log(eps / (num_classes - 1)) if eps > 0 else 0.0
    return right + wrong
