"""Asynchronous checkpointing cost with `torch.distributed.checkpoint.async_save`.

async_save returns once the state is staged (copied off the training tensors); the write
continues in a background thread. The blocking part is what a training loop pays per
checkpoint with async saving, the total is how soon the next checkpoint could start.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Any

__all__ = ["time_async_save"]


def time_async_save(state: dict[str, Any], directory: str | Path) -> dict[str, Any]:
    """{"blocking_s", "total_s", "note"}; the times are None (with the reason) where the
    installed torch has no usable async_save."""
    try:
        import torch.distributed.checkpoint as dcp

        async_save = dcp.async_save
    except (ImportError, AttributeError) as exc:
        return {"blocking_s": None, "total_s": None, "note": f"torch.distributed.checkpoint.async_save unavailable: {exc}"}
    kwargs = {"no_dist": True} if "no_dist" in inspect.signature(async_save).parameters else {}
    try:
        t0 = time.perf_counter()
        future = async_save(state, checkpoint_id=str(directory), **kwargs)
        blocking = time.perf_counter() - t0
        result = getattr(future, "upload_completion", future)  # AsyncSaveResponse in newer torch
        result.result()
        total = time.perf_counter() - t0
    except Exception as exc:  # a torch without single-process async saving: say why
        return {"blocking_s": None, "total_s": None, "note": f"async_save failed: {type(exc).__name__}: {exc}"[:300]}
    return {"blocking_s": blocking, "total_s": total, "note": None}
