"""Roofline projection and memory fit: arithmetic by hand and properties."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from trainbench.catalog import get_gpu
from trainbench.cost.fit import CUDA_CONTEXT_BYTES, HEADROOM, check_fit, usable_bytes
from trainbench.cost.memory import MemoryEstimate
from trainbench.cost.projection import ASSUMED_EFFICIENCY, project, roofline_time

pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False)
flops = st.floats(min_value=1e6, max_value=1e13, allow_nan=False)
nbytes = st.one_of(st.none(), st.floats(min_value=1e3, max_value=1e10, allow_nan=False))
gpus = st.sampled_from(["t4", "l4", "a10", "v100", "a100-40g", "a100-80g", "h100", "h200", "l40s"])


def est(state=1e9, fixed=0, per_sample=1e8, precision="fp32"):
    return MemoryEstimate("w", "full", precision, params=1, param_bytes=int(state / 4), grad_bytes=int(state / 4),
                          optimizer_bytes=int(state / 2), optimizer="AdamW", activation_fixed_bytes=int(fixed),
                          activation_per_sample_bytes=int(per_sample))


@settings(deadline=None)  # timing noise on a shared CPU must not fail arithmetic
@given(pos, flops, nbytes, gpus)
def test_projecting_onto_the_measured_gpu_gives_the_measurement(sps, f, b, name):
    g = get_gpu(name)
    # keep the measurement below the roofline (efficiency <= 1) for the identity to hold
    sps = min(sps, 0.99 / roofline_time(f, b, g, "fp16")[0])
    p = project(sps, g, name, g, f, f, "fp16", "fp16", b, b)
    assert p.samples_per_s == pytest.approx(sps, rel=1e-9)
    assert p.basis.startswith(f"projected from {name}") and "calibrated" in p.basis


@settings(deadline=None)  # timing noise on a shared CPU must not fail arithmetic
@given(pos, flops, st.floats(min_value=1.1, max_value=10))
def test_compute_bound_throughput_scales_with_peak(sps, f, k):
    a100 = get_gpu("a100-80g")
    peaks = {p: (v * k if v else v) for p, v in a100.peak_tflops.items()}
    faster = dataclasses.replace(a100, name="a100x", peak_tflops=peaks)
    sps = min(sps, 0.5 / roofline_time(f, None, a100, "bf16")[0])
    base = project(sps, a100, "a100-80g", a100, f, f, "bf16", "bf16")
    up = project(sps, a100, "a100-80g", faster, f, f, "bf16", "bf16")
    assert up.samples_per_s == pytest.approx(k * base.samples_per_s, rel=1e-9)


def test_projection_by_hand():
    h100, a100 = get_gpu("h100"), get_gpu("a100-80g")
    # compute bound: 1e12 FLOPs/sample; A100 bf16 312 TFLOPS -> roof 3.205 ms; measured 156 samples/s
    # (6.41 ms) = 50% of roofline; H100 989.5 TFLOPS -> roof 1.0106 ms -> 50% -> 494.75 samples/s
    p = project(156.0, a100, "a100-80g", h100, 1e12, 1e12, "bf16", "bf16")
    assert p.efficiency == pytest.approx(0.5)
    assert p.samples_per_s == pytest.approx(494.75)
    assert p.bound == "compute"
    # memory bound: 1e9 FLOPs but 1e9 bytes/sample: A100 roof 1e9 / 2039e9 = 0.4904 ms
    p = project(1019.5, a100, "a100-80g", h100, 1e9, 1e9, "bf16", "bf16", 1e9, 1e9)
    assert p.bound == "memory" and p.efficiency == pytest.approx(0.5)
    assert p.samples_per_s == pytest.approx(0.5 * 3350e9 / 1e9)


def test_projection_from_a_cpu_uses_the_stated_assumed_efficiency():
    h100 = get_gpu("h100")
    p = project(40.0, get_gpu("cpu"), "cpu", h100, 1e12, 1e12, "fp32", "bf16")
    assert p.samples_per_s == pytest.approx(ASSUMED_EFFICIENCY * 989.5e12 / 1e12)
    assert p.basis.startswith("projected from cpu") and "assumed 35%" in p.basis


def test_projection_without_a_target_peak_is_none_and_says_why():
    p = project(40.0, None, "cpu", get_gpu("a10g"), 1e12, 1e12, "fp32", "bf16")
    assert p.samples_per_s is None and p.basis == "n/a: no bf16 peak for a10g in the catalog"


def test_fit_by_hand():
    t4 = get_gpu("t4")
    usable = 16e9 * (1 - HEADROOM) - CUDA_CONTEXT_BYTES  # 13.9 GB
    assert usable_bytes(t4) == pytest.approx(usable)
    f = check_fit(est(), t4, 64)
    assert f.fits and f.largest_batch == 129 and f.advice == ()  # (13.9e9 - 1e9) // 1e8
    f = check_fit(est(), t4, 256, amp_est=est(per_sample=0.5e8, precision="bf16"))
    assert f.fits is False and f.largest_batch == 129
    text = " | ".join(f.advice)
    assert "micro-batch 129 x 2 steps" in text
    assert "AMP fp16" in text and "largest batch 258" in text  # T4: no bf16, so fp16
    assert "activation checkpointing" in text


def test_fit_when_the_model_state_alone_does_not_fit():
    f = check_fit(est(state=20e9), get_gpu("t4"), 1)
    assert f.fits is False and f.largest_batch == 0
    assert "FSDP" in f.advice[0]


def test_fit_on_cpu_is_unknown():
    f = check_fit(est(), get_gpu("cpu"), 8)
    assert f.fits is None and f.largest_batch is None


@settings(deadline=None)  # timing noise on a shared CPU must not fail arithmetic
@given(st.floats(min_value=1e6, max_value=5e10), st.floats(min_value=0, max_value=1e9),
       st.floats(min_value=1e3, max_value=5e9), gpus)
def test_largest_batch_is_the_boundary(state, fixed, per_sample, name):
    e, g = est(state, fixed, per_sample), get_gpu(name)
    b = e.largest_batch(usable_bytes(g))
    if b:
        assert e.total_bytes(b) <= usable_bytes(g) < e.total_bytes(b + 1)
        assert check_fit(e, g, b).fits and not check_fit(e, g, b + 1).fits
    else:
        assert not check_fit(e, g, 1).fits
