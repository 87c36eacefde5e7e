"""The plan line's duration estimate: workload FLOPs over an assumed rate, labelled as such."""

import pytest

from trainbench.catalog import get_gpu
from trainbench.harness.plan import ASSUMED_MFU, SETUP_S, PlannedBenchmark, estimate
from trainbench.workloads import get_workload


def test_gpu_estimate_is_flops_over_peak_times_assumed_mfu_plus_setup():
    spec = get_gpu("h100")
    wl = get_workload("gpt-small")
    est = estimate([PlannedBenchmark("gpt-small", "bf16"), PlannedBenchmark(None)], size="full", steps=50,
                   warmup=10, grad_accum=1, batch_size=None, spec=spec, on_gpu=True)
    flops = 60 * wl.default_batch_size("full") * wl.flops_per_sample("full")
    assert est.count == 2
    assert est.seconds == pytest.approx(2 * SETUP_S + flops / (spec.peak_flops("bf16") * ASSUMED_MFU))
    assert "assumed MFU" in est.basis


def test_cpu_estimate_says_its_assumption():
    est = estimate([PlannedBenchmark("resnet50")], size="tiny", steps=10, warmup=3, grad_accum=1, batch_size=None,
                   spec=None, on_gpu=False)
    assert est.seconds > SETUP_S and "GFLOP/s per core" in est.basis and "assumed" in est.basis
