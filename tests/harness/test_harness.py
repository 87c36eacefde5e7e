"""Harness pieces on the CPU: clock, measured window, precision paths, the pipeline learns."""

import itertools
import math

import pytest
import torch

from trainbench.harness.measure import measure
from trainbench.harness.precision import PRECISIONS, UnsupportedPrecision, get_precision
from trainbench.harness.run import RunConfig, build_trainer, run
from trainbench.harness.timing import DeviceClock
from trainbench.errors import InputError
from trainbench.workloads import get_workload


def test_cpu_clock_measures_perf_counter_seconds():
    clock = DeviceClock("cpu")
    a = clock.mark()
    torch.ones(1000).sum()
    b = clock.mark()
    assert 0 < clock.seconds(a, b) < 1


def test_measured_window_accounts_for_every_step_and_wait():
    out = run(RunConfig(workload="resnet50", steps=6, warmup=2, grad_accum=2, batch_size=4))
    m = out.measurement
    assert len(m.step_times_s) == 6 and len(m.input_wait_s) == 6 and len(m.losses) == 6
    assert m.samples == 6 * 2 * 4
    # step times tile the window: their sum is the device-timeline duration of the window
    assert sum(m.step_times_s) <= m.wall_s * 1.001
    assert sum(m.step_times_s) >= 0.9 * m.wall_s
    assert all(0 <= w <= t for w, t in zip(m.input_wait_s, m.step_times_s))
    assert out.metrics["samples_per_s"] == pytest.approx(48 / m.wall_s)


class _SlowLoader:
    """Every batch takes `delay` seconds to arrive: a known input stall."""

    def __init__(self, batch, delay):
        self.batch, self.delay = batch, delay

    def __iter__(self):
        import time

        while True:
            time.sleep(self.delay)
            yield self.batch


def test_stall_ratio_sees_a_slow_loader():
    wl = get_workload("gpt-small")
    batch = torch.utils.data.default_collate([wl.dataset("tiny", 4, 0)[i] for i in range(4)])
    cfg = RunConfig(workload="gpt-small", steps=5, warmup=1)
    fast = run(cfg, loader=_SlowLoader(batch, 0.0)).metrics["stall_ratio"]
    slow = run(cfg, loader=_SlowLoader(batch, 0.2)).metrics["stall_ratio"]
    assert slow > 0.5  # 200 ms wait against a tiny model's few-ms step
    assert fast < slow / 3  # (loose: a shared 2-core box can deschedule us inside a fetch)


@pytest.mark.parametrize("name", ["fp32", "bf16", "fp16"])
def test_precisions_run_on_cpu_and_stay_finite(name):
    out = run(RunConfig(workload="bert-base", precision=name, steps=3, warmup=1))
    assert all(math.isfinite(x) for x in out.measurement.losses)


def test_fp16_uses_a_grad_scaler_cpu_twin():
    trainer = build_trainer(RunConfig(workload="gpt-small", precision="fp16", steps=2, warmup=0))
    assert isinstance(trainer.scaler, torch.amp.GradScaler)
    loss = trainer.step()
    assert math.isfinite(loss.item()) and trainer.scaler.get_scale() > 0


def test_tf32_is_refused_on_cpu_with_the_alternative():
    with pytest.raises(UnsupportedPrecision, match="on CPU use fp32 or bf16"):
        get_precision("tf32").check(torch.device("cpu"))


def test_unknown_precision_lists_the_supported():
    with pytest.raises(InputError, match="supported: fp32, tf32, bf16, fp16"):
        get_precision("fp8")
    assert set(PRECISIONS) == {"fp32", "tf32", "bf16", "fp16"}


@pytest.mark.parametrize("workload", ["resnet50", "bert-base", "gpt-small"])
def test_tiny_workload_overfits_one_fixed_batch(workload):
    """50 optimizer steps on one batch at least halve the loss: the whole pipeline learns."""
    wl = get_workload(workload)
    data = wl.dataset("tiny", 8, 0)
    batch = torch.utils.data.default_collate([data[i] for i in range(8)])
    torch.manual_seed(0)
    trainer = build_trainer(RunConfig(workload=workload, batch_size=8), loader=itertools.repeat(batch))
    losses = [trainer.step().item() for _ in range(50)]
    assert losses[-1] <= 0.5 * losses[0], (losses[0], losses[-1])


def test_grad_accumulation_averages_micro_batches():
    """k micro-batches of b give the gradient of one batch of k*b (no BatchNorm: GPT)."""
    wl = get_workload("gpt-small")
    data = wl.dataset("tiny", 8, 0)
    full = torch.utils.data.default_collate([data[i] for i in range(8)])
    halves = [{k: v[:4] for k, v in full.items()}, {k: v[4:] for k, v in full.items()}]
    grads = []
    for accum, loader in ((1, itertools.repeat(full)), (2, itertools.cycle(halves))):
        torch.manual_seed(0)
        t = build_trainer(RunConfig(workload="gpt-small", grad_accum=accum), loader=loader)
        t.model.eval()  # no dropout noise
        t.optimizer.step = lambda: None  # keep the gradients, skip the update
        t.model.train = lambda mode=True: t.model  # stay in eval inside step()
        t.step()
        grads.append(torch.cat([p.grad.flatten() for p in t.model.parameters()]))
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-4, atol=1e-6)


def test_tf32_switch_uses_the_new_api_when_a_user_already_set_it():
    """torch >= 2.9 raises on reading the legacy allow_tf32 once fp32_precision was set."""
    from trainbench.harness.precision import get_precision

    matmul = torch.backends.cuda.matmul
    if not hasattr(matmul, "fp32_precision"):
        pytest.skip("this torch has only the legacy TF32 flags")
    before = (matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision)
    matmul.fp32_precision = "tf32"  # what a user's own set-up code does
    try:
        with get_precision("fp32").context(torch.device("cuda")):  # flags only: no CUDA call
            assert matmul.fp32_precision == "ieee" and torch.backends.cudnn.conv.fp32_precision == "ieee"
        assert matmul.fp32_precision == "tf32"  # restored
        with get_precision("tf32").context(torch.device("cuda")):
            assert matmul.fp32_precision == "tf32"
    finally:
        matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision = before
