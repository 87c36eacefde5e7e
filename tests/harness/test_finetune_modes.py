"""Issue 17, must-show 3 and the harness modes: LoRA through peft (trainable count equal to
peft's own, only adapters move, the memory estimate drops exactly the frozen weights' grads and
optimizer state), token-weighted gradient accumulation for a response-only loss, the
instruction data, and the compile warm-up that keeps compilation out of the window."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from trainbench.cost.memory import estimate_memory
from trainbench.errors import InputError
from trainbench.harness.finetune import LoraSettings, apply_finetune, parameter_counts
from trainbench.harness.run import RunConfig, build_trainer, run
from trainbench.workloads import get_workload, register_workload, workloads
from trainbench.workloads.instructions import IGNORE, PAD, SyntheticInstructions

peft = pytest.importorskip("peft")
LLAMA = get_workload("llama-1b")


def test_lora_trainable_parameter_count_equals_peft_and_the_analytic_count():
    s = LoraSettings()
    torch.manual_seed(0)
    ours = parameter_counts(apply_finetune(LLAMA.model("tiny"), "lora", LLAMA, s))
    config = peft.LoraConfig(r=s.rank, lora_alpha=s.alpha, target_modules=list(LLAMA.lora_targets))
    trainable, total = peft.get_peft_model(LLAMA.model("tiny"), config).get_nb_trainable_parameters()
    assert (ours["trainable_params"], ours["params"]) == (trainable, total)
    base = LLAMA.model("tiny")  # r x (in + out) per adapted Linear
    analytic = sum(s.rank * (m.in_features + m.out_features) for n, m in base.named_modules()
                   if isinstance(m, torch.nn.Linear) and n.rsplit(".", 1)[-1] in LLAMA.lora_targets)
    assert trainable == analytic


def _params(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def test_after_lora_steps_only_adapter_weights_changed():
    t = build_trainer(RunConfig(workload="llama-1b", finetune="lora", device="cpu", steps=2, warmup=0))
    before = _params(t.model)
    for _ in range(2):  # B starts at zero, so A first moves on the second step
        t.step()
    after = _params(t.model)
    changed = {n for n in before if not torch.equal(before[n], after[n])}
    adapters = {n for n in before if "lora_" in n}
    assert changed == adapters and adapters
    assert all(not p.requires_grad or "lora_" in n for n, p in t.model.named_parameters())


def _held_bytes(trainer) -> dict[str, int]:
    """What autograd and the optimizer really hold after a step on the CPU."""
    params = {id(p): p for p in trainer.model.parameters()}.values()
    nbytes = lambda t: t.numel() * t.element_size()  # noqa: E731
    opt = sum(nbytes(v) for st in trainer.optimizer.state.values() for v in st.values() if torch.is_tensor(v))
    return {"weights": sum(nbytes(p) for p in params),
            "grads": sum(nbytes(p.grad) for p in params if p.grad is not None), "optimizer": opt}


def test_lora_estimate_is_below_full_by_the_frozen_grads_and_optimizer_state():
    est = {m: estimate_memory(LLAMA, "tiny", finetune=m, trace_device="cpu") for m in ("full", "lora")}
    held = {}
    for mode in ("full", "lora"):
        t = build_trainer(RunConfig(workload="llama-1b", finetune=mode, device="cpu"))
        t.step()
        held[mode] = _held_bytes(t)
        assert est[mode].state_bytes == pytest.approx(sum(held[mode].values()), rel=0.05)
    real_drop = (held["full"]["grads"] + held["full"]["optimizer"]) - (held["lora"]["grads"] + held["lora"]["optimizer"])
    est_drop = (est["full"].grad_bytes + est["full"].optimizer_bytes) - (est["lora"].grad_bytes + est["lora"].optimizer_bytes)
    assert est_drop == pytest.approx(real_drop, rel=0.05)
    # the frozen base keeps its weights (plus the adapters' own): it is not free
    assert est["lora"].param_bytes > est["full"].param_bytes
    assert est["full"].state_bytes - est["lora"].state_bytes == pytest.approx(est_drop - (
        est["lora"].param_bytes - est["full"].param_bytes), rel=1e-9)


def test_lora_is_refused_for_a_workload_without_targets():
    with pytest.raises(InputError, match="--finetune=lora.*gpt-small"):
        build_trainer(RunConfig(workload="gpt-small", finetune="lora", device="cpu"))


# ---- instruction data and the response-only loss under gradient accumulation ------------------


@pytest.mark.parametrize("packed", [False, True])
def test_instruction_samples_score_only_response_tokens(packed):
    data = SyntheticInstructions(16, 64, 512, seed=3, packed=packed)
    for i in range(len(data)):
        s = data[i]
        tokens, labels = s["tokens"], s["labels"]
        assert tokens.shape == (65,) and labels.shape == (64,)
        scored = labels != IGNORE
        assert 0 < scored.sum() < 64  # a response is scored, the prompt is not
        assert torch.equal(labels[scored], tokens[1:][scored])  # next-token targets
        assert not (tokens[1:][scored] == PAD).any()  # padding is never a target
        if packed:
            assert (tokens == PAD).sum() <= 1
    assert torch.equal(data[5]["tokens"], SyntheticInstructions(16, 64, 512, seed=3, packed=packed)[5]["tokens"])


def _grads(workload: str, batch: int, accum: int, data) -> dict[str, torch.Tensor]:
    from trainbench.data import LoaderConfig, make_loader

    loader = make_loader(data, LoaderConfig(batch_size=batch, shuffle=False))
    t = build_trainer(RunConfig(workload=workload, batch_size=batch, grad_accum=accum, device="cpu"), loader=loader)
    t.step()
    return {n: p.grad.double() for n, p in t.model.named_parameters() if p.grad is not None}


def _rel(a, b):
    return (sum((a[n] - b[n]).pow(2).sum() for n in a).sqrt() / sum(b[n].pow(2).sum() for n in b).sqrt()).item()


def test_grad_accumulation_weights_micro_batches_by_their_response_tokens():
    data = LLAMA.dataset("tiny", 8, 0)
    big = _grads("llama-1b", 8, 1, data)
    assert _rel(_grads("llama-1b", 4, 2, data), big) < 1e-5
    # the same workload averaging each micro-batch alike gets a different (wrong) gradient
    register_workload(replace(LLAMA, name="llama-1b-per-micro-mean", loss_items=None))
    try:
        assert _rel(_grads("llama-1b-per-micro-mean", 4, 2, data), big) > 1e-3
    finally:
        workloads().unregister("llama-1b-per-micro-mean")


# ---- --compile: one tiny model, regional (one block compiled, reused) --------------------------


def test_compile_warmup_records_graphs_and_keeps_recompilation_out_of_the_window():
    from torch._dynamo.utils import counters

    out = run(RunConfig(workload="llama-1b", compile="regional", device="cpu", steps=2, warmup=1))
    assert out.metrics["compile_s"] > 0
    assert out.modes["compile"] == "regional" and out.modes["compile_regional_blocks"] == 2
    assert out.modes["compile_graphs"] >= 1 and out.modes["compile_graph_breaks"] == 0
    assert out.modes["compile_stable"] and out.modes["compile_steps"] >= 2
    # nothing compiled after the warm-up: the window (and its warm-up) added no graph
    assert counters["stats"]["unique_graphs"] == out.modes["compile_graphs"]
