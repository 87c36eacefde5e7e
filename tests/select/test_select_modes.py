"""Issue 17, must-show 6: `trainbench select --workload llama-1b --size full` shows from the
estimate, labelled, that full fine-tuning (AdamW, fp32 master weights: 16 bytes/param, ~19.8
GB of state) does not fit a 16 GB T4, names LoRA / FSDP / activation checkpointing as the fix,
and says per GPU row which modes fit."""

from __future__ import annotations

import re

import pytest

from trainbench.catalog.gpus import gpu_catalog
from trainbench.cli import main
from trainbench.cost.fit import fit_modes, mode_advice, mode_estimates, modes_cell
from trainbench.records.record import Record
from trainbench.records.results import write_results
from trainbench.workloads import get_workload


@pytest.fixture(scope="module")
def estimates():
    return mode_estimates(get_workload("llama-1b"), "full", "fp32")


def test_full_fine_tuning_state_is_16_bytes_per_param_and_lora_keeps_only_weights(estimates):
    full, lora = estimates["full"], estimates["LoRA"]
    assert full.params == 1_235_814_400
    assert full.state_bytes == pytest.approx(16 * 1_235_814_400, rel=1e-6)  # 4 + 4 + 2 x 4, + Adam's step
    assert full.state_bytes / 1e9 == pytest.approx(19.8, abs=0.05)
    assert lora.grad_bytes + lora.optimizer_bytes < 0.02 * (full.grad_bytes + full.optimizer_bytes)
    assert estimates["full + act. ckpt"].activation_per_sample_bytes < full.activation_per_sample_bytes / 2


def test_on_a_t4_full_does_not_fit_and_lora_fsdp_and_checkpointing_are_the_fixes(estimates):
    t4 = gpu_catalog().get("t4")
    fits = {f.label: f for f in fit_modes(estimates, t4, 1)}
    assert fits["full"].fits is False and fits["LoRA"].fits and fits["LoRA + act. ckpt"].fits
    assert fits["full"].fsdp_ranks >= 2
    advice = mode_advice(list(fits.values()), t4)
    assert "19.8 GB" in advice and "16 bytes per trainable param" in advice
    assert all(word in advice for word in ("LoRA", "act. ckpt", "FSDP"))
    assert modes_cell(list(fits.values())).startswith("LoRA, LoRA + act. ckpt, full on FSDP x")
    a100 = fit_modes(estimates, gpu_catalog().get("a100-80g"), 1)
    assert all(f.fits for f in a100) and mode_advice(a100, gpu_catalog().get("a100-80g")) is None


def test_select_report_shows_modes_per_row_and_the_labelled_estimate(tmp_path, capsys, estimates):
    rec = Record(test="bench/test_training.py::test_training[llama-1b-fp32-full-none]", kind="training",
                 workload="llama-1b", size="tiny", precision="fp32", batch_size=8, gpu="cpu",
                 metrics={"samples_per_s": 20.0})
    path = write_results(tmp_path / "cpu.json", {"gpu_profile": "cpu", "gpu_name": None}, [rec])
    assert main(["select", str(path), "--workload", "llama-1b", "--size", "full", "--clouds", "aws",
                 "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()  # the terminal shows the compact ranking; the detail is in select.md
    md = (tmp_path / "out" / "select.md").read_text()
    assert "modes that fit (estimate)" in md
    assert re.search(r"Mode estimate, full: .*= 19\.8 GB \(16 bytes/param, fp32 master weights\).*\(estimate\)", md)
    t4_row = next(line for line in md.splitlines() if "g4dn.xlarge" in line)
    assert "| NO " in t4_row and "LoRA, LoRA + act. ckpt, full on FSDP x" in t4_row
    assert re.search(r"full fine-tuning needs .* \(estimate\).*19\.8 GB.*of one t4; fits with: LoRA", md)
