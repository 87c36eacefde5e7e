"""Numeric precision of a run: autocast dtype, TF32 switch and loss scaling.

fp32  : no autocast; TF32 off on CUDA (the dense fp32 peak is the MFU denominator).
tf32  : fp32 tensors, TF32 tensor-core matmuls/convs (CUDA, Ampere and newer).
bf16  : autocast to bfloat16 (CUDA with bf16 support, or CPU).
fp16  : autocast to float16 + GradScaler. On CUDA this is classic AMP; on CPU it runs the same
        code path through torch's CPU autocast and `GradScaler("cpu")` (the CPU twin, so the
        scaler logic is exercised without a GPU; CPU fp16 speed means nothing).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Iterator

import torch

from ..errors import InputError

__all__ = ["PRECISIONS", "Precision", "UnsupportedPrecision", "get_precision"]


class UnsupportedPrecision(InputError):
    """The precision exists but this device cannot run it; the message says why and what to use."""


def _new_tf32_api() -> bool:
    # torch >= 2.9: fp32_precision per backend. Reading a legacy allow_tf32 flag after anything
    # set the new one raises RuntimeError ("mix of the legacy and new APIs"), so never mix them.
    return hasattr(torch.backends.cuda.matmul, "fp32_precision")


def _tf32_state() -> tuple:
    if _new_tf32_api():
        return torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision
    return torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32


def _set_tf32_state(state: tuple) -> None:
    """`state` as `_tf32_state` returns it, or ("tf32"|"ieee",) * 2 to switch both."""
    matmul, conv = state
    if _new_tf32_api():
        torch.backends.cuda.matmul.fp32_precision = matmul if isinstance(matmul, str) else ("tf32" if matmul else "ieee")
        torch.backends.cudnn.conv.fp32_precision = conv if isinstance(conv, str) else ("tf32" if conv else "ieee")
    else:
        torch.backends.cuda.matmul.allow_tf32 = matmul == "tf32" if isinstance(matmul, str) else matmul
        torch.backends.cudnn.allow_tf32 = conv == "tf32" if isinstance(conv, str) else conv


@dataclass(frozen=True)
class Precision:
    name: str
    autocast_dtype: torch.dtype | None
    tf32: bool
    loss_scaling: bool
    catalog_key: str  # which catalog peak is the MFU denominator

    def check(self, device: torch.device) -> None:
        if device.type == "cuda":
            major, _ = torch.cuda.get_device_capability(device)
            if self.name == "tf32" and major < 8:
                raise UnsupportedPrecision(
                    f"--precision=tf32 needs an Ampere or newer GPU (compute capability 8.0+), found "
                    f"{torch.cuda.get_device_name(device)}: use --precision=fp16 or fp32"
                )
            if self.name == "bf16" and major < 8:  # native bf16 from Ampere on (a T4 only emulates it)
                raise UnsupportedPrecision(
                    f"--precision=bf16: {torch.cuda.get_device_name(device)} has no bf16 support: use --precision=fp16"
                )
        elif self.name == "tf32":
            raise UnsupportedPrecision("--precision=tf32: tf32 is a CUDA tensor-core mode; on CPU use fp32 or bf16")

    @contextlib.contextmanager
    def context(self, device: torch.device) -> Iterator[None]:
        """TF32 switches for the whole run (restored on exit)."""
        if device.type != "cuda":
            yield
            return
        old = _tf32_state()
        _set_tf32_state(("tf32" if self.tf32 else "ieee",) * 2)
        try:
            yield
        finally:
            _set_tf32_state(old)

    def autocast(self, device: torch.device):
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=device.type, dtype=self.autocast_dtype)

    def scaler(self, device: torch.device) -> torch.amp.GradScaler | None:
        return torch.amp.GradScaler(device.type) if self.loss_scaling else None


PRECISIONS = {
    "fp32": Precision("fp32", None, tf32=False, loss_scaling=False, catalog_key="fp32"),
    "tf32": Precision("tf32", None, tf32=True, loss_scaling=False, catalog_key="tf32"),
    "bf16": Precision("bf16", torch.bfloat16, tf32=False, loss_scaling=False, catalog_key="bf16"),
    "fp16": Precision("fp16", torch.float16, tf32=False, loss_scaling=True, catalog_key="fp16"),
}


def get_precision(name: str) -> Precision:
    try:
        return PRECISIONS[name.strip().lower()]
    except KeyError:
        raise InputError(
            f"unknown precision --precision={name}; supported: {', '.join(PRECISIONS)}"
        ) from None
