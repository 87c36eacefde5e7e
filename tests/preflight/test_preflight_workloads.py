"""Tiny user workloads for the preflight tests: one sound, and several deliberately broken in
the ways the checklist must catch. No tests here: other test files, the `trainbench preflight
--plugin` CLI and the fresh resume process import this file and call its hook.

Each is a 2-layer MLP on seeded Gaussian blobs (8 features, 10 classes): fast on a CPU.
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from trainbench.workloads import Workload

FEATURES, CLASSES = 8, 10


class Blobs(Dataset):
    """Sample i depends only on (seed, i). `redraw_labels`: the label is redrawn from the global
    RNG on every access (a data-pipeline bug: nothing can be memorized)."""

    def __init__(self, n, seed, redraw_labels=False):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, FEATURES, generator=g)
        self.y = torch.randint(0, CLASSES, (n,), generator=g)
        self.redraw = redraw_labels

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        y = torch.randint(0, CLASSES, ()) if self.redraw else self.y[i]
        return {"x": self.x[i], "y": y}


def mlp(norm=None):
    layers = [nn.Linear(FEATURES, 32)] + ([norm] if norm is not None else []) + [nn.ReLU(), nn.Linear(32, CLASSES)]
    return nn.Sequential(*layers)


class InputScaler(nn.Module):
    """Normalizes inputs by a running estimate of their scale, kept in a buffer that training
    updates -- registered with persistent=False, so checkpoints silently lose it."""

    def __init__(self, persistent):
        super().__init__()
        self.net = mlp()
        self.register_buffer("scale", torch.ones(()), persistent=persistent)

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.scale.mul_(0.5).add_(0.5 * x.abs().mean() * 3)
        return self.net(x / self.scale)


class Overflow(nn.Module):
    """Logits scaled by 1e5: finite in fp32, beyond float16's 65504 under autocast."""

    def __init__(self):
        super().__init__()
        self.net = mlp()

    def forward(self, x):
        return self.net(x) * 1e5


def ce(model, batch):
    return F.cross_entropy(model(batch["x"]), batch["y"])


def ce_sum(model, batch):
    return F.cross_entropy(model(batch["x"]), batch["y"], reduction="sum")


def adam(lr):
    return lambda params, size: torch.optim.Adam(params, lr=lr)


def _workload(name, model, loss=ce, optimizer=adam(1e-2), dataset=lambda size, n, seed: Blobs(n, seed)):
    return Workload(name=name, model=model, dataset=dataset, loss=loss, optimizer=optimizer,
                    flops_per_sample=lambda size: 6.0 * (FEATURES * 32 + 32 * CLASSES), epoch_samples=1000,
                    batch_size={"tiny": 8, "full": 8})


WORKLOADS = [
    _workload("pf-good", lambda size: mlp()),
    _workload("pf-batchnorm", lambda size: mlp(nn.BatchNorm1d(32))),
    _workload("pf-lr-too-small", lambda size: mlp(), optimizer=adam(1e-6)),
    _workload("pf-redrawn-labels", lambda size: mlp(), dataset=lambda size, n, seed: Blobs(n, seed, redraw_labels=True)),
    _workload("pf-sum-loss", lambda size: mlp(), loss=ce_sum),
    _workload("pf-unsaved-buffer", lambda size: InputScaler(persistent=False)),
    _workload("pf-saved-buffer", lambda size: InputScaler(persistent=True)),
    _workload("pf-fp16-overflow", lambda size: Overflow(), optimizer=adam(1e-4)),
]


def pytest_trainbench_register_workloads(register):
    for w in WORKLOADS:
        register(w)
