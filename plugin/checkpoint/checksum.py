"""A checksum over a checkpoint payload: sha256 of a canonical walk of the nested structure.

The walk covers every tensor's dtype, shape and bytes and every plain value (dict keys in a
sorted order), so a flipped bit, a truncated tensor or a missing entry changes it. It is
stored inside the checkpoint next to the payload, so the file stays an ordinary
`torch.save` file that `torch.load(weights_only=True)` reads.
"""

from __future__ import annotations

import hashlib
from typing import Any

import torch

__all__ = ["payload_checksum"]


def payload_checksum(obj: Any) -> str:
    h = hashlib.sha256()
    _feed(h, obj)
    return h.hexdigest()


def _feed(h, obj: Any) -> None:
    if torch.is_tensor(obj):
        t = obj.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}|".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy())  # raw bytes, any dtype (bf16 too)
    elif isinstance(obj, dict):
        h.update(b"D%d|" % len(obj))
        for key in sorted(obj, key=lambda k: (type(k).__name__, repr(k))):
            _feed(h, key)
            _feed(h, obj[key])
    elif isinstance(obj, (list, tuple)):
        h.update(b"L%d|" % len(obj) if isinstance(obj, list) else b"U%d|" % len(obj))
        for item in obj:
            _feed(h, item)
    elif isinstance(obj, bool) or obj is None:
        h.update(f"B{obj}|".encode())
    elif isinstance(obj, int):
        h.update(f"I{obj}|".encode())
    elif isinstance(obj, float):
        h.update(f"F{obj.hex()}|".encode())  # exact, NaN and inf included
    elif isinstance(obj, str):
        data = obj.encode("utf-8")
        h.update(b"S%d|" % len(data) + data)
    elif isinstance(obj, (torch.dtype, torch.device, torch.Size)):
        h.update(f"X{obj}|".encode())
    else:
        raise TypeError(f"checkpoint payload holds a {type(obj).__name__}; only tensors and plain types are allowed")
