"""A resumed run that lost one AdamW step: inside the bf16 tolerance, so the old GPU rule passed
it; the deterministic-mode verdict (bitwise) fails it."""

import torch

from trainbench.checkpoint.compare import (
    compare_logs, compare_states, final_state, resume_verdict, within_tolerance,
)


def _train(steps: int) -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x = torch.randn(8, 16, generator=gen)
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    return final_state(model, opt)


def _logs(n):
    return [{"step": i, "loss": 1.0 / (i + 1), "indices": [i]} for i in range(n)]


def test_a_lost_step_fails_in_deterministic_mode_though_the_bf16_tolerance_passes_it():
    # the parameters: one AdamW step moves each by about lr, far inside bf16's (2e-2, 1e-3)
    ref = {k: v for k, v in _train(10).items() if k.startswith("model.")}
    lost = {k: v for k, v in _train(9).items() if k.startswith("model.")}
    assert within_tolerance(ref, lost, "bf16")  # the old GPU criterion: passes a lost step
    states, logs = compare_states(ref, lost), compare_logs(_logs(10), _logs(10))
    ok, criterion = resume_verdict(states, logs, ref, lost, "bf16", deterministic=True)
    assert not ok and "bitwise" in criterion


def test_an_exact_resume_passes():
    ref, same = _train(5), _train(5)
    ok, _ = resume_verdict(compare_states(ref, same), compare_logs(_logs(5), _logs(5)), ref, same, "bf16")
    assert ok


def test_outside_deterministic_mode_the_tolerance_applies_and_says_its_limit():
    ref, same = _train(5), _train(5)
    ok, criterion = resume_verdict(compare_states(ref, same), compare_logs(_logs(5), _logs(5)), ref, same,
                                   "bf16", deterministic=False)
    assert ok and "cannot tell a lost step" in criterion
