"""Projection model (serial roofline at a stated efficiency) and memory fit: arithmetic by hand
and properties."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from trainbench.catalog import get_gpu
from trainbench.cost.fit import CUDA_CONTEXT_BYTES, HEADROOM, check_fit, usable_bytes
from trainbench.cost.memory import MemoryEstimate
from trainbench.cost.projection import (
    MEMORY_EFFICIENCY, Efficiency, device_precision, fit_efficiency, model_time, project,
)
from trainbench.cost.step import StepCost

flops = st.floats(min_value=1e6, max_value=1e13, allow_nan=False)
nbytes = st.one_of(st.none(), st.floats(min_value=1e3, max_value=1e10, allow_nan=False))
effs = st.floats(min_value=0.01, max_value=1.0)
gpus = st.sampled_from(["t4", "l4", "a10", "a10g", "v100", "a100-40g", "a100-80g", "h100", "h200", "l40s"])


def cost(f=1e12, b=None, batch=32):
    return StepCost("w", "full", "fp16", batch, f, b)


def est(state=1e9, fixed=0, per_sample=1e8, precision="fp32"):
    return MemoryEstimate("w", "full", precision, params=1, param_bytes=int(state / 4), grad_bytes=int(state / 4),
                          optimizer_bytes=int(state / 2), optimizer="AdamW", activation_fixed_bytes=int(fixed),
                          activation_per_sample_bytes=int(per_sample))


@settings(deadline=None)  # timing noise on a shared CPU must not fail arithmetic
@given(flops, nbytes, effs, gpus)
def test_fitting_the_efficiency_of_a_projection_gives_it_back(f, b, e, name):
    g = get_gpu(name)
    c = cost(f, b)
    p = project(c, g, "fp16", Efficiency(e, "published", "test"))
    assert fit_efficiency(c, g, "fp16", p.samples_per_s) == pytest.approx(e, rel=1e-6)


@settings(deadline=None)
@given(flops, effs, st.floats(min_value=1.1, max_value=10))
def test_compute_bound_throughput_scales_with_peak(f, e, k):
    a100 = get_gpu("a100-80g")
    faster = dataclasses.replace(a100, name="a100x", peak_tflops={p: (v * k if v else v) for p, v in a100.peak_tflops.items()})
    eff = Efficiency(e, "published", "test")
    base, up = project(cost(f), a100, "bf16", eff), project(cost(f), faster, "bf16", eff)
    assert up.samples_per_s == pytest.approx(k * base.samples_per_s, rel=1e-9)


def test_projection_by_hand():
    h100 = get_gpu("h100")
    # 1e12 FLOPs at 989.5 TFLOPS x 50% = 2.0212 ms; 1e9 bytes at 3350 GB/s x 85% = 0.35119 ms
    p = project(cost(1e12, 1e9), h100, "bf16", Efficiency(0.5, "published", "fit"))
    t = 1e12 / (989.5e12 * 0.5) + 1e9 / (3350e9 * MEMORY_EFFICIENCY)
    assert p.samples_per_s == pytest.approx(1 / t)
    assert p.bound == "compute" and "50% (fit)" in p.method and "85% (assumed)" in p.method
    # memory dominates when bytes are large
    assert model_time(cost(1e9, 1e10), h100, "bf16", 0.5)[1] == "memory"


def test_precision_falls_back_where_the_gpu_lacks_it():
    assert device_precision(get_gpu("t4"), "bf16") == ("fp16", "fp16 on t4: no bf16")
    assert device_precision(get_gpu("v100"), "tf32")[0] == "fp32"
    p = project(cost(), get_gpu("t4"), "bf16", Efficiency(0.3, "assumed", "x"))
    assert p.samples_per_s and p.method.startswith("fp16 on t4")


def test_without_a_peak_or_an_efficiency_the_projection_is_none_and_says_why():
    p = project(cost(), get_gpu("cpu"), "bf16", Efficiency(0.3, "assumed", "x"))
    assert p.samples_per_s is None and p.method == "n/a: no bf16 peak for cpu in the catalog"
    p = project(cost(), get_gpu("a100-80g"), "bf16", None)
    assert p.samples_per_s is None and "no efficiency" in p.method


def test_a10g_has_a_labelled_derived_peak():
    a10g = get_gpu("a10g")
    assert a10g.verified == "derived" and "DERIVED" in a10g.source
    assert a10g.peak_tflops["bf16"] == pytest.approx(80 * 512 * 1.71e9 / 1e12, rel=1e-3)
    p = project(cost(), a10g, "bf16", Efficiency(0.3, "published", "fit"))
    assert "derived peak" in p.method


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


def test_step_cost_counts_frozen_weights_as_read_not_trained():
    from trainbench.cost.memory import estimate_memory
    from trainbench.cost.step import FROZEN_PASSES, step_cost
    from trainbench.workloads import get_workload
    import dataclasses as dc

    w = get_workload("bert-base")
    full = estimate_memory(w, "tiny", "fp32")

    def frozen_embeddings(size):
        model = w.model(size)
        for p in model.bert.word_emb.parameters():  # a frozen embedding table
            p.requires_grad_(False)
        return model

    part = estimate_memory(dc.replace(w, model=frozen_embeddings), "tiny", "fp32")
    assert part.frozen_param_bytes > 0 and part.param_bytes == full.param_bytes  # every weight is held
    a, b = step_cost(w, "tiny", "fp32", 8, full), step_cost(w, "tiny", "fp32", 8, part)
    assert b.bytes_per_sample < a.bytes_per_sample  # no grads or optimizer state for the frozen part
    saved = full.state_bytes - (part.state_bytes - part.frozen_param_bytes)  # 4 (weight + grad + 2 AdamW) x frozen
    expect = a.bytes_per_sample - 3 * saved / 8 + FROZEN_PASSES * part.frozen_param_bytes / 8
    assert b.bytes_per_sample == pytest.approx(expect, rel=0.02)  # activations may differ slightly
