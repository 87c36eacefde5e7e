"""Variant rows and MIG slices, with faked device names, memory and NVML signals."""

import pytest
import torch

from trainbench.catalog import detect_gpu, get_gpu, profile
from trainbench.catalog.mig import MigSignals, mig_reason, mig_spec
from trainbench.cost.record_cost import cost_for_record
from trainbench.errors import DeviceMismatch
from trainbench.records.record import Record

GB = 10**9


def test_nvl_and_pcie_variants_have_their_own_peaks():
    assert detect_gpu("NVIDIA H200 NVL", 141 * GB).name == "h200-nvl"
    assert detect_gpu("NVIDIA H200", 141 * GB).name == "h200"
    assert detect_gpu("NVIDIA H800 PCIe", 80 * GB).name == "h800-pcie"
    assert detect_gpu("NVIDIA H800", 80 * GB).name == "h800"
    assert get_gpu("h200-nvl").peak_flops("bf16") < get_gpu("h200").peak_flops("bf16")
    assert get_gpu("h800-pcie").peak_flops("bf16") < get_gpu("h800").peak_flops("bf16")


@pytest.mark.parametrize("signals, memory", [
    (MigSignals(nvml_uuid="MIG-4f1c0b7e-0000-5000-8000-000000000001"), 141 * GB),
    (MigSignals(visible_devices="MIG-4f1c0b7e-0000-5000-8000-000000000001"), 141 * GB),
    (MigSignals(mig_mode=True), 141 * GB),
    (MigSignals(), 18 * GB),  # a 1g.18gb slice, no NVML: its memory gives it away
])
def test_a_mig_slice_is_detected_by_any_signal(signals, memory):
    assert "MIG slice of h200" in mig_reason(get_gpu("h200"), memory, signals)


def test_the_whole_gpu_is_not_a_slice():
    assert mig_reason(get_gpu("h200"), 140 * GB, MigSignals("GPU-4f1c0b7e", False, "0")) is None
    assert mig_reason(get_gpu("t4"), 15_600_000_000, MigSignals()) is None


def test_a_slice_gets_no_peak_and_no_price_with_the_reason(monkeypatch):
    monkeypatch.setattr(profile, "_detected", lambda: ("NVIDIA H200", 18 * GB))
    monkeypatch.setattr(profile, "mig_signals", lambda i: MigSignals(nvml_uuid="MIG-abc"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    label, spec, device = profile.resolve_profile("h200")  # the parent's profile is accepted
    assert label == "h200-mig" and device.type == "cuda"
    assert all(spec.peak_flops(p) is None for p in ("fp32", "tf32", "bf16", "fp16"))
    assert "MIG-abc" in spec.source and "MFU" in spec.source
    assert profile.resolve_profile("auto")[0] == "h200-mig"
    with pytest.raises(DeviceMismatch):
        profile.resolve_profile("a100-80g")
    rec = Record(test="t", kind="training", workload="resnet50", gpu=label, metrics={"samples_per_s": 1000.0})
    usd, why = cost_for_record(rec, workload=type("W", (), {"epoch_samples": 1_281_167})())
    assert usd is None and "MIG slice" in why


def test_mig_spec_keeps_the_parent_name_as_prefix():
    s = mig_spec(get_gpu("a100-80g"), "a MIG slice of a100-80g (x)")
    assert s.name == "a100-80g-mig" and s.verified == "n/a"
