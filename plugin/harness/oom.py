"""Is this exception the device running out of memory? Near the limit CUDA does not always
raise `torch.OutOfMemoryError`: cuBLAS and cuDNN workspace allocations and NCCL buffers fail as
plain RuntimeErrors. All of them are a result about the configuration (batch, precision,
model), recorded as `oom`, not a crash of the tool.

Free memory only after leaving the `except` block: inside it the traceback still references
the frames that hold the model and the activations."""

from __future__ import annotations

import gc

import torch

__all__ = ["is_oom", "oom_text", "release_device_memory", "OOM_MARKERS"]

# substrings of the RuntimeError messages torch, cuBLAS, cuDNN and NCCL give for failed allocations
OOM_MARKERS = (
    "CUDA out of memory",
    "out of memory",  # NCCL: "Cuda failure 'out of memory'"; HIP likewise
    "CUBLAS_STATUS_ALLOC_FAILED",
    "CUDNN_STATUS_ALLOC_FAILED",
    "cudaErrorMemoryAllocation",
    "Failed to CUDA calloc",
    "NCCL WARN Cuda failure 2",
)
_NOT_OOM = ("CUDNN_STATUS_NOT_SUPPORTED",)


def oom_text(message: str) -> bool:
    """True when an error message (a rank's log line, say) reports a failed device allocation."""
    if any(m in message for m in _NOT_OOM):
        return False
    return "OutOfMemoryError" in message or any(m in message for m in OOM_MARKERS)


def is_oom(exc: BaseException) -> bool:
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    return isinstance(exc, RuntimeError) and oom_text(str(exc))


def release_device_memory() -> None:
    """Return cached device memory to the driver (for a subprocess on the same GPU, or the next
    benchmark); a no-op on a CPU."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        gc.collect()  # tensors only a reference cycle still holds go back to the cache first
        torch.cuda.empty_cache()
