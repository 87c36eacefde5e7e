"""The measured matmul peak: seeded non-zero inputs, agreement with an independent timing of the
same matmul, and `mfu_achievable` on the training records of this CPU."""

import statistics
import time

import pytest
import torch

from trainbench.harness.peak import matmul_flops, probe_peak
from trainbench.harness.precision import UnsupportedPrecision
from trainbench.harness.run import RunConfig, run

SIDE = 256


def _independent_best(side: int, iters: int, reps: int = 7) -> list[float]:
    """FLOP/s of each of `reps` timed loops of `iters` of the same seeded matmul, timed here with
    perf_counter and nothing from the probe (loops as long as the probe's batches: on a loaded
    box a longer loop is likelier to lose the core)."""
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(side, side, generator=g), torch.randn(side, side, generator=g)
    out = torch.empty(side, side)
    torch.mm(a, b, out=out)
    rates = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            torch.mm(a, b, out=out)
        rates.append(matmul_flops(side, side, side) * iters / (time.perf_counter() - t0))
    return rates


def test_probe_agrees_with_an_independent_timing_of_the_same_matmul_within_10_percent():
    """Best against best, interleaved: on a shared, loaded box the load changes from second to
    second, so the probe and the independent loop take turns (paired in time), and the fastest
    repetition of each is the one least hit by other work. Skipped, not failed, when the
    independent timing cannot reproduce itself (the box is too noisy to tell)."""
    probe_best, ours = 0.0, []
    for i in range(12):
        p = probe_peak("cpu", "fp32", shapes=(SIDE,), batch_s=0.005, batches=3).shapes[0]
        probe_best = max(probe_best, p.best_flops_per_s)
        ours += _independent_best(SIDE, p.iters_per_batch, reps=3)
        if i >= 5 and abs(probe_best / max(ours) - 1) <= 0.05:
            break
    top = sorted(ours)[-3:]
    if top[0] < 0.9 * top[-1]:  # its own three best runs disagree by > 10%
        pytest.skip(f"machine too noisy to compare timings (independent best three: "
                    f"{', '.join(f'{t / 1e9:.1f}' for t in top)} GFLOP/s)")
    assert probe_best == pytest.approx(max(ours), rel=0.10), (probe_best, max(ours))


def test_probe_reports_every_shape_and_the_best_one_with_its_method():
    p = probe_peak("cpu", "fp32", shapes=(64, 128), batch_s=0.005, batches=3, seed=3)
    assert [s.m for s in p.shapes] == [64, 128]
    assert p.flops_per_s == max(s.median_flops_per_s for s in p.shapes) > 0
    assert p.shape[0] in (64, 128) and p.seed == 3
    assert p.method.startswith("measured: ") and "on cpu" in p.method
    assert p.to_json()["method"] == p.method


def test_probe_refuses_a_precision_the_device_cannot_run():
    with pytest.raises(UnsupportedPrecision):
        probe_peak("cpu", "tf32")


def test_cpu_training_record_gets_mfu_achievable_in_0_1():
    peak = probe_peak("cpu", "fp32")
    print(f"\nmeasured CPU peak fp32: {peak.flops_per_s / 1e9:.2f} GFLOP/s at {peak.shape[0]}^3 "
          f"({torch.get_num_threads()} thread(s), seeded N(0,1) inputs)")
    out = run(RunConfig("gpt-small", steps=3, warmup=1, batch_size=2), achievable_peak_flops_per_s=peak.flops_per_s)
    m = out.metrics
    assert m["mfu"] is None  # no catalog peak for a CPU
    assert 0.0 < m["mfu_achievable"] <= 1.0, m["mfu_achievable"]
    assert m["mfu_achievable"] == pytest.approx(m["model_flops_per_s"] / peak.flops_per_s)
