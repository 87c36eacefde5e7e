"""Random number generator states of a process, as tensors and plain types (loadable with
`torch.load(weights_only=True)`): Python `random`, NumPy's global generator, torch CPU and
every CUDA device. Dropout draws from torch's generator, so a resumed run needs it back."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch

__all__ = ["rng_state", "set_rng_state"]


def rng_state() -> dict[str, Any]:
    version, words, gauss = random.getstate()  # (3, 625 ints < 2**32, None or float)
    kind, keys, pos, has_gauss, cached = np.random.get_state()  # ('MT19937', uint32[624], ...)
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []
    return {
        "python": {"version": version, "state": torch.tensor(words, dtype=torch.int64), "gauss": gauss},
        "numpy": {
            "kind": kind,
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached),
        },
        "torch": torch.get_rng_state(),  # uint8 tensor
        "cuda": list(cuda),  # one uint8 tensor per visible device
    }


def set_rng_state(state: dict[str, Any]) -> None:
    py = state["python"]
    random.setstate((py["version"], tuple(int(w) for w in py["state"].tolist()), py["gauss"]))
    n = state["numpy"]
    np.random.set_state(
        (n["kind"], n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"], n["cached_gaussian"])
    )
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        for i, s in enumerate(state["cuda"][: torch.cuda.device_count()]):
            torch.cuda.set_rng_state(s, i)
