"""What a checkpoint holds, taken from and put back into a running `Trainer`.

    payload = {
        "step": int, "epoch": int,                     # optimizer steps done, epochs started
        "model", "optimizer", "scheduler", "scaler",   # state_dicts (None where absent)
        "ranks": [{"rng": ..., "data": ...}, ...],     # per data-parallel rank: RNG + loader state
        "fingerprint": str, "config": dict,            # what run this belongs to
    }

Tensors are moved to the CPU, so the file loads on any machine. RNG states are restored last:
nothing between the restore and the next step may draw a random number.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import torch

from .rng import rng_state, set_rng_state
from ..errors import InputError

__all__ = ["fingerprint", "rank_state", "capture", "restore", "check_fingerprint"]


def fingerprint(config: dict[str, Any]) -> str:
    """A short hash of the settings a resumed run must share with the one that saved."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _unwrap(model: torch.nn.Module) -> torch.nn.Module:
    return getattr(model, "module", model)  # DistributedDataParallel keeps the model in .module


def _to_cpu(obj: Any) -> Any:
    if torch.is_tensor(obj):
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_cpu(v) for v in obj)
    return obj


def rank_state(epochs: Any) -> dict[str, Any]:
    """This process's share: its RNG streams and its loader position."""
    return {"rng": rng_state(), "data": epochs.state_dict()}


def capture(trainer: Any, epochs: Any, ranks: list[dict[str, Any]], *, config: dict[str, Any]) -> dict[str, Any]:
    scaler = trainer.scaler.state_dict() if trainer.scaler is not None else None
    return _to_cpu({
        "step": trainer.steps_done,
        "epoch": epochs.epoch,
        "model": _unwrap(trainer.model).state_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "scheduler": trainer.scheduler.state_dict() if trainer.scheduler is not None else None,
        "scaler": scaler or None,  # GradScaler.state_dict() is {} before its first step
        "ranks": ranks,
        "fingerprint": fingerprint(config),
        "config": config,
    })


def check_fingerprint(payload: dict[str, Any], config: dict[str, Any], where: str) -> None:
    if payload.get("fingerprint") == fingerprint(config):
        return
    saved = payload.get("config") or {}
    diff = [f"{k}: checkpoint {saved.get(k)!r}, now {config.get(k)!r}"
            for k in sorted(set(saved) | set(config)) if saved.get(k) != config.get(k)]
    raise InputError(
        f"checkpoint {where} belongs to a different run ({'; '.join(diff) or 'fingerprint differs'}); "
        f"rerun with the same flags, or use a fresh --checkpoint-dir (or drop --resume auto) to start over"
    )


def restore(trainer: Any, epochs: Any, payload: dict[str, Any], rank: int = 0) -> None:
    _unwrap(trainer.model).load_state_dict(payload["model"])
    trainer.optimizer.load_state_dict(payload["optimizer"])
    if trainer.scheduler is not None and payload["scheduler"] is not None:
        trainer.scheduler.load_state_dict(payload["scheduler"])
    if trainer.scaler is not None and payload["scaler"]:
        trainer.scaler.load_state_dict(payload["scaler"])
    trainer.steps_done = int(payload["step"])
    ranks = payload["ranks"]
    if rank >= len(ranks):
        raise InputError(f"the checkpoint was written by {len(ranks)} rank(s); this is rank {rank}: "
                         f"resume with the same world size")
    epochs.load_state_dict(ranks[rank]["data"])
    set_rng_state(ranks[rank]["rng"])  # last
