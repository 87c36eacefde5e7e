"""Must-show 2: the memory estimate.

- weights + grads + optimizer state are exact: equal to the bytes of `p`, `p.grad` and every
  tensor in `optimizer.state` after a real step, for every workload and several optimizers;
- the activation part is within 10% of the bytes autograd actually saves for backward in a
  real CPU forward (counted with saved_tensors_hooks, tensors sharing storage counted once),
  for each built-in workload's tiny preset and for larger configurations;
- on a GPU, the total is compared with torch.cuda.max_memory_allocated.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import default_collate

from cost_toy_workloads import TOY_WORKLOADS
from trainbench.cost.memory import estimate_memory, saved_activation_bytes, state_bytes
from trainbench.workloads import get_workload

BUILTINS = ("resnet50", "bert-base", "gpt-small")


def _workload(name):
    return next((w for w in TOY_WORKLOADS if w.name == name), None) or get_workload(name)


def _batch(w, size, n, seed=1):
    ds = w.dataset(size, n, seed)
    return default_collate([ds[i] for i in range(n)])


def _measured_state_bytes(model, optimizer, loss_fn, batch) -> int:
    optimizer.zero_grad()
    loss_fn(model, batch).backward()
    optimizer.step()
    seen = {}
    tensors = [p for p in model.parameters()] + [p.grad for p in model.parameters() if p.grad is not None]
    for state in optimizer.state.values():
        tensors += [v for v in state.values() if torch.is_tensor(v)]
    for t in tensors:
        seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return sum(seen.values())


OPTIMIZERS = {
    "workload": None,
    "sgd": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "sgd-momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "adam-amsgrad": lambda ps: torch.optim.Adam(ps, lr=1e-3, amsgrad=True),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-3),
}


@pytest.mark.parametrize("opt", list(OPTIMIZERS))
@pytest.mark.parametrize("name", BUILTINS + ("toy-gpt", "toy-cnn"))
def test_model_state_bytes_are_exact(name, opt):
    w = _workload(name)
    torch.manual_seed(0)
    model = w.model("tiny")
    make = OPTIMIZERS[opt] or (lambda ps: w.optimizer(ps, "tiny"))
    optimizer = make(model.parameters())
    params, grads, opt_bytes, _ = state_bytes(model, optimizer)
    measured = _measured_state_bytes(model, optimizer, w.loss, _batch(w, "tiny", 2))
    assert params + grads + opt_bytes == measured


def test_estimate_state_matches_the_real_model():
    # estimate_memory builds the model under FakeTensorMode: same numbers as the real one
    w = get_workload("gpt-small")
    est = estimate_memory(w, "tiny", "fp32")
    model = w.model("tiny")
    params, grads, opt_bytes, desc = state_bytes(model, w.optimizer(model.parameters(), "tiny"))
    assert (est.param_bytes, est.grad_bytes, est.optimizer_bytes) == (params, grads, opt_bytes)
    assert est.params == sum(p.numel() for p in model.parameters())
    assert "AdamW" in est.optimizer


CASES = [(n, "tiny", None, p) for n in BUILTINS for p in ("fp32", "bf16")] + [
    ("resnet50", "full", 3, "fp32"),  # the published configuration, 224x224; small batch for CPU time
    ("toy-gpt", "wide", None, "fp32"),
    ("toy-gpt", "wide", None, "bf16"),
    ("toy-cnn", "wide", None, "fp32"),
]


@pytest.mark.parametrize("name,size,batch,precision", CASES)
def test_activation_estimate_within_10_percent_of_saved_bytes(name, size, batch, precision):
    w = _workload(name)
    batch = batch or w.default_batch_size(size)
    est = estimate_memory(w, size, precision, trace_device="cpu")
    torch.manual_seed(0)
    real = saved_activation_bytes(w.model(size), w.loss, _batch(w, size, batch), precision, "cpu")
    assert real > 0
    assert abs(est.activation_bytes(batch) - real) <= 0.10 * real, (est.activation_bytes(batch), real)


def test_activation_counting_dedupes_views():
    # a tensor and its views share one storage: counted once
    lin = torch.nn.Linear(8, 8)
    x = torch.randn(4, 8, requires_grad=True)

    def loss(model, batch):
        y = model(batch)  # saves x (input) and the weight (excluded: a parameter)
        z = y.view(2, 16)
        return (z * z).sum() + (y.t() * y.t()).sum()  # z and y.t() are views of y

    got = saved_activation_bytes(lin, loss, x)
    assert got == x.numel() * 4 + 4 * 8 * 4  # x, and y (B, C) once for y, z and y.t()


def test_amp_halves_most_activations():
    w = get_workload("gpt-small")
    fp32, bf16 = estimate_memory(w, "tiny", "fp32"), estimate_memory(w, "tiny", "bf16")
    assert bf16.activation_per_sample_bytes < fp32.activation_per_sample_bytes
    assert bf16.state_bytes == fp32.state_bytes  # AMP keeps fp32 master weights and grads


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("name,batch", [("resnet50", 32), ("bert-base", 32), ("gpt-small", 4)])
def test_estimate_against_cuda_max_memory_allocated(name, batch):
    # Full presets (activations dominate, so cuBLAS/cuDNN workspaces are small beside them); two
    # optimizer steps, the second with optimizer state allocated; peak over the second. The
    # estimate (traced on cuda) leaves out backward transients, so it sits somewhat below.
    w = get_workload(name)
    size = "full"
    est = estimate_memory(w, size, "fp32", trace_device="cuda")
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = w.model(size).to(dev)
    opt = w.optimizer(model.parameters(), size)
    data = {k: v.to(dev) for k, v in _batch(w, size, batch).items()}
    for _ in range(2):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        opt.zero_grad(set_to_none=False)  # grads stay allocated, as the estimate counts them
        w.loss(model, data).backward()
        opt.step()
        torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    estimate = est.total_bytes(batch)
    print(f"{name} full batch {batch}: estimate {estimate / 1e9:.3f} GB, max_memory_allocated {peak / 1e9:.3f} GB, "
          f"ratio {estimate / peak:.3f}")
    assert 0.6 * peak <= estimate <= 1.15 * peak
