"""Comparing a resumed run with the uninterrupted one: final state and per-step log.

`final_state` flattens model + optimizer into a plain dict of tensors (what `--save-final`
writes; `torch.load(weights_only=True)` reads it). `compare_states` reports bitwise equality
(byte-for-byte, NaN-safe) and the max absolute / relative difference; `compare_logs` compares
per-step losses and the sample indices each step consumed.

`resume_verdict` decides: in deterministic mode (the drill always runs it, on CPU and GPU) the
resumed run must be bitwise equal -- one lost or repeated AdamW step moves a weight by about lr,
well inside any reduced-precision tolerance, so a tolerance would pass it. TOLERANCES (|a - b| <=
atol + rtol * |b|, per precision) are only for runs outside deterministic mode, and say so.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import torch

__all__ = ["TOLERANCES", "resume_verdict", "final_state", "compare_states", "within_tolerance", "read_loss_log", "compare_logs"]

# precision -> (rtol, atol) for a resume on a GPU: reduced-precision matmuls round differently
# when kernel choice or accumulation order differs between processes.
TOLERANCES: dict[str, tuple[float, float]] = {
    "fp32": (1e-5, 1e-7),
    "tf32": (1e-3, 1e-5),
    "bf16": (2e-2, 1e-3),
    "fp16": (1e-2, 1e-4),
}


def final_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, torch.Tensor]:
    model = getattr(model, "module", model)
    out = {f"model.{k}": v.detach().cpu().clone() for k, v in model.state_dict().items()}
    sd = optimizer.state_dict()
    for idx, state in sd["state"].items():
        for key, value in state.items():
            t = value if torch.is_tensor(value) else torch.tensor(value)
            out[f"optimizer.state.{idx}.{key}"] = t.detach().cpu().clone()
    for g, group in enumerate(sd["param_groups"]):
        out[f"optimizer.param_groups.{g}.lr"] = torch.tensor(float(group["lr"]), dtype=torch.float64)
    return out


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.detach().cpu().contiguous().reshape(-1).view(torch.uint8)


def compare_states(reference: dict[str, torch.Tensor], other: dict[str, torch.Tensor]) -> dict[str, Any]:
    missing = sorted(set(reference) ^ set(other))
    bitwise, max_abs, max_rel, worst = not missing, 0.0, 0.0, None
    for key in sorted(set(reference) & set(other)):
        a, b = reference[key], other[key]
        if a.shape != b.shape or a.dtype != b.dtype:
            bitwise, worst = False, key
            max_abs = max_rel = math.inf
            continue
        if not torch.equal(_bytes(a), _bytes(b)):
            bitwise = False
        if a.numel() == 0:
            continue
        diff = (a.double() - b.double()).abs()
        d = float(diff.max())
        r = float((diff / a.double().abs().clamp_min(1e-12)).max())
        if d > max_abs:
            max_abs, worst = d, key
        max_rel = max(max_rel, r)
    return {"bitwise_equal": bitwise, "max_abs_diff": max_abs, "max_rel_diff": max_rel,
            "worst_tensor": worst, "tensors": len(reference), "missing_or_extra": missing}


def within_tolerance(reference: dict[str, torch.Tensor], other: dict[str, torch.Tensor], precision: str) -> bool:
    rtol, atol = TOLERANCES[precision]
    if set(reference) != set(other):
        return False
    return all(torch.allclose(other[k].double(), reference[k].double(), rtol=rtol, atol=atol, equal_nan=True)
               for k in reference)


def read_loss_log(path: str | Path) -> list[dict[str, Any]]:
    """Entries of a --loss-log file (one JSON object per step); a torn last line is ignored."""
    entries = []
    for line in Path(path).read_text().splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            break
    return entries


def compare_logs(reference: list[dict[str, Any]], other: list[dict[str, Any]]) -> dict[str, Any]:
    ref = {e["step"]: e for e in reference}
    got = {e["step"]: e for e in other}
    steps = sorted(ref)
    loss_equal = steps == sorted(got) and all(ref[s]["loss"] == got[s]["loss"] for s in steps)
    data_mismatch = [s for s in steps if s not in got or ref[s].get("indices") != got[s].get("indices")]
    diffs = [abs(ref[s]["loss"] - got[s]["loss"]) for s in steps if s in got]
    return {
        "steps": len(steps),
        "loss_bitwise_equal": loss_equal,
        "loss_max_abs_diff": max(diffs) if diffs else None,
        "data_equal": not data_mismatch and sorted(got) == steps,
        "first_data_mismatch_step": data_mismatch[0] if data_mismatch else None,
    }


def resume_verdict(states: dict[str, Any], logs: dict[str, Any], reference: dict[str, torch.Tensor],
                   other: dict[str, torch.Tensor], precision: str, deterministic: bool = True) -> tuple[bool, str]:
    """(passed, criterion) for a resumed run against the uninterrupted one.

    `states` from `compare_states`, `logs` from `compare_logs`. Deterministic mode: bitwise equal
    parameters, optimizer state and per-step losses, and the same samples at every step.
    Otherwise the per-precision tolerance, with the same data and the same number of steps."""
    same_data = bool(logs["data_equal"])
    if deterministic:
        ok = bool(states["bitwise_equal"] and logs["loss_bitwise_equal"] and same_data)
        return ok, "deterministic mode: bitwise equal parameters, optimizer state and losses; same data"
    rtol, atol = TOLERANCES[precision]
    ok = within_tolerance(reference, other, precision) and same_data
    return ok, (f"not deterministic: |a-b| <= atol + rtol*|ref|, (rtol, atol) = ({rtol}, {atol}); same data "
                f"(a tolerance cannot tell a lost step from rounding)")
