"""Seeded synthetic tasks whose best achievable loss is known in closed form (floors.py).

A task is bound to a workload by the shape of the workload's batch, so any causal LM whose
batch is {"tokens": (T + 1,)} (gpt-small, and a Llama workload with the same batch) gets the
Markov task, any classifier with {"image", "label"} or {"input_ids", "attention_mask", "label"}
gets the noisy-label task. Vocabulary and class counts are read off the model built on the
meta device (no memory, no init): the first nn.Embedding is the token table, the last
nn.Linear the classifier head.

The task's structure (transition table, class prototypes) is fixed by `task_seed`; a run's
seed only changes the model init and which samples it trains on. Sample i of a data set
depends on (seed, i) alone, as in workloads/synthetic.py.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from ..errors import InputError
from .floors import markov_entropy_rate, noisy_label_floor

__all__ = ["Task", "MarkovTokens", "NoisyImages", "NoisyTokenClasses", "task_for"]

HELD_OUT_SEED = 1_000_003  # data seed of the held-out set: never a training seed (those are small)


@dataclass(frozen=True)
class Task:
    name: str
    floor: float  # nats per prediction, closed form
    derivation: str  # how the floor follows from the construction, in words
    dataset: Callable[[int, int], Dataset]  # (n, seed) -> samples shaped like the workload's batch
    # batch (collated, CPU) -> (logits (N, C), targets (N,)) of the model that knows the process
    oracle: Callable[[dict], tuple[torch.Tensor, torch.Tensor]]
    # held-out samples: enough that the estimate's standard error is ~1-2% of the floor
    eval_samples: int = 128
    # held-out batch = this x the training micro-batch: large for small classifier inputs (the
    # forward pass without grads is cheap per sample), 1 for LMs (logits are B x T x vocab)
    eval_batch_multiple: int = 1

    def oracle_loss(self, batch: dict) -> float:
        logits, targets = self.oracle(batch)
        return float(F.cross_entropy(logits.double(), targets))


def _rng(seed: int, i: int) -> np.random.Generator:
    return np.random.default_rng([seed, i])


class _Samples(Dataset):
    def __init__(self, n: int, seed: int, draw: Callable[[np.random.Generator], dict]):
        self.n, self.seed, self.draw = n, seed, draw

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict:
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.draw(_rng(self.seed, i))


class MarkovTokens:
    """Sparse order-1 Markov chain over the first `states` token ids of a `vocab`.

    Each state has `branching` successors: itself (aperiodic), the next state on a ring
    (irreducible) and random others, with Dirichlet(alpha) weights. Windows of `seq + 1` tokens
    start from the stationary distribution.
    """

    def __init__(self, vocab: int, seq: int, states: int = 128, branching: int = 4, alpha: float = 1.0,
                 task_seed: int = 0, labels: bool = False):
        self.labels = labels  # also give `labels` = the next tokens (an SFT loss that reads them)
        states = min(states, vocab)
        rng = np.random.default_rng([task_seed, 17])
        succ = np.empty((states, branching), dtype=np.int64)
        for i in range(states):
            others = rng.choice(np.setdiff1d(np.arange(states), [i, (i + 1) % states]), branching - 2, replace=False)
            succ[i] = [i, (i + 1) % states, *others]
        prob = rng.dirichlet(np.full(branching, alpha), size=states)
        self.vocab, self.seq, self.states = vocab, seq, states
        self.succ, self.prob, self.cum = succ, prob, np.cumsum(prob, axis=1)
        self.entropy_rate = markov_entropy_rate(succ, prob)
        from .floors import stationary_distribution

        self._pi_cum = np.cumsum(stationary_distribution(succ, prob)).tolist()
        self._succ, self._cum = succ.tolist(), self.cum.tolist()
        logp = torch.full((states, vocab), -1e4, dtype=torch.float64)  # impossible next tokens
        logp.scatter_(1, torch.from_numpy(succ), torch.from_numpy(np.log(prob)))
        self.logp = logp  # (states, vocab)

    def _draw(self, rng: np.random.Generator) -> dict:
        # a plain-Python walk (bisect on list rows): ~1 us per token, numpy scalar calls are ~10x slower
        u = rng.random(self.seq + 1).tolist()
        s = min(bisect.bisect_right(self._pi_cum, u[0]), self.states - 1)
        out = [s]
        last = self.succ.shape[1] - 1
        for x in u[1:]:
            s = self._succ[s][min(bisect.bisect_right(self._cum[s], x), last)]
            out.append(s)
        tokens = torch.tensor(out, dtype=torch.long)
        return {"tokens": tokens, "labels": tokens[1:].clone()} if self.labels else {"tokens": tokens}

    def task(self) -> Task:
        derivation = (f"order-1 Markov chain on {self.states} of {self.vocab} token ids, {self.succ.shape[1]} "
                      f"successors per state, windows start in the stationary distribution pi: floor = entropy "
                      f"rate H = -sum_i pi_i sum_j P_ij log P_ij = {self.entropy_rate:.6f} nats/token")

        def oracle(batch):
            tokens = batch["tokens"]  # (B, T + 1)
            return self.logp[tokens[:, :-1]].flatten(0, 1), tokens[:, 1:].flatten()

        return Task("markov-lm", self.entropy_rate, derivation,
                    lambda n, seed: _Samples(n, seed, self._draw), oracle)


def _noisy_label(rng: np.random.Generator, true: int, k: int, eps: float) -> int:
    if rng.random() >= eps:
        return true
    return int((true + 1 + rng.integers(k - 1)) % k)  # uniform over the K - 1 other classes


class NoisyImages:
    """Class c = a fixed random uint8 prototype image + Gaussian pixel noise (std `noise`);
    prototypes are far apart (thousands of pixels differ by ~100), so c is recoverable from
    the image; the label is then wrong at rate eps."""

    def __init__(self, image_size: int, num_classes: int, eps: float = 0.1, noise: float = 24.0, task_seed: int = 0):
        rng = np.random.default_rng([task_seed, 29])
        self.protos = rng.integers(40, 216, size=(num_classes, 3, image_size, image_size)).astype(np.float64)
        self.k, self.eps, self.noise = num_classes, eps, noise

    def _draw(self, rng: np.random.Generator) -> dict:
        c = int(rng.integers(self.k))
        img = np.clip(self.protos[c] + rng.normal(0.0, self.noise, self.protos.shape[1:]), 0, 255)
        return {"image": torch.from_numpy(img.round().astype(np.uint8)),
                "label": torch.tensor(_noisy_label(rng, c, self.k, self.eps))}

    def task(self) -> Task:
        floor = noisy_label_floor(self.eps, self.k)
        derivation = (f"{self.k} classes, image = class prototype + N(0, {self.noise:g}^2) noise (class recoverable by "
                      f"nearest prototype), label wrong at rate eps={self.eps:g} uniformly over the other classes: "
                      f"floor = -(1-eps) log(1-eps) - eps log(eps/(K-1)) = {floor:.6f} nats")
        protos = torch.from_numpy(self.protos).flatten(1)  # (K, 3 H W)

        def oracle(batch):
            x = batch["image"].double().flatten(1)
            true = torch.cdist(x, protos).argmin(1)
            return _posterior_logits(true, self.k, self.eps), batch["label"]

        return Task("noisy-images", floor, derivation, lambda n, seed: _Samples(n, seed, self._draw), oracle,
                    eval_samples=2048, eval_batch_multiple=8)


class NoisyTokenClasses:
    """Class c = every token drawn from c's own block of token ids (blocks disjoint, id 0 is
    padding), variable length with an attention mask as in MNLI; label wrong at rate eps."""

    def __init__(self, vocab: int, seq: int, num_classes: int, eps: float = 0.1, block: int = 32):
        self.block = min(block, (vocab - 1) // num_classes)
        self.seq, self.k, self.eps = seq, num_classes, eps

    def _draw(self, rng: np.random.Generator) -> dict:
        c = int(rng.integers(self.k))
        length = int(rng.integers(self.seq // 2, self.seq + 1))
        ids = torch.zeros(self.seq, dtype=torch.long)
        ids[:length] = torch.from_numpy(1 + c * self.block + rng.integers(self.block, size=length))
        mask = torch.zeros(self.seq, dtype=torch.long)
        mask[:length] = 1
        return {"input_ids": ids, "attention_mask": mask, "label": torch.tensor(_noisy_label(rng, c, self.k, self.eps))}

    def task(self) -> Task:
        floor = noisy_label_floor(self.eps, self.k)
        derivation = (f"{self.k} classes, tokens drawn from a class's own block of {self.block} ids (class recoverable "
                      f"from any token), label wrong at rate eps={self.eps:g} uniformly over the other classes: "
                      f"floor = -(1-eps) log(1-eps) - eps log(eps/(K-1)) = {floor:.6f} nats")

        def oracle(batch):
            true = (batch["input_ids"][:, 0] - 1) // self.block  # every real token names the class
            return _posterior_logits(true, self.k, self.eps), batch["label"]

        return Task("noisy-token-classes", floor, derivation, lambda n, seed: _Samples(n, seed, self._draw), oracle,
                    eval_samples=2048, eval_batch_multiple=8)


def _posterior_logits(true: torch.Tensor, k: int, eps: float) -> torch.Tensor:
    """log Bayes posterior (N, K): log(1 - eps) at the true class, log(eps / (K - 1)) elsewhere."""
    out = torch.full((true.numel(), k), float(np.log(eps / (k - 1))), dtype=torch.float64)
    out[torch.arange(true.numel()), true] = float(np.log(1 - eps))
    return out


def _shapes(workload, size: str) -> tuple[dict, int | None, int | None]:
    """(one sample, token-table rows, classifier outputs) of the workload at `size`."""
    sample = workload.dataset(size, 1, 0)[0]
    with torch.device("meta"):
        model = workload.model(size)
    embeds = [m for m in model.modules() if isinstance(m, nn.Embedding)]
    linears = [m for m in model.modules() if isinstance(m, nn.Linear)]
    return sample, (embeds[0].num_embeddings if embeds else None), (linears[-1].out_features if linears else None)


def task_for(workload, size: str, task_seed: int = 0, eps: float = 0.1) -> Task:
    """The known-floor task shaped like `workload`'s batches at `size`."""
    sample, vocab, classes = _shapes(workload, size)
    keys = set(sample)
    if keys == {"tokens"} and vocab:
        return MarkovTokens(vocab, sample["tokens"].numel() - 1, task_seed=task_seed).task()
    if keys == {"tokens", "labels"} and vocab:  # a fine-tuning LM (llama-1b): the loss on every token
        return MarkovTokens(vocab, sample["tokens"].numel() - 1, task_seed=task_seed, labels=True).task()
    if keys == {"image", "label"} and classes:
        return NoisyImages(sample["image"].shape[-1], classes, eps, task_seed=task_seed).task()
    if keys == {"input_ids", "attention_mask", "label"} and vocab and classes:
        return NoisyTokenClasses(vocab, sample["input_ids"].numel(), classes, eps).task()
    raise InputError(
        f"--workload={workload.name}: no known-floor convergence task for a batch with keys {sorted(keys)}; "
        "supported: {tokens} or {tokens, labels} (causal LM), {image, label}, {input_ids, attention_mask, label}"
    )
