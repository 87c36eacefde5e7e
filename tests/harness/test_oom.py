"""Near the limit CUDA raises plain RuntimeErrors too: they are OOM results, not crashes."""

import pytest
import torch

from trainbench.cost.batch_search import largest_batch_search
from trainbench.harness.oom import is_oom, oom_text

OOM_MESSAGES = [
    "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.77 GiB total capacity)",
    "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
    "cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
    "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error, NCCL version 2.21.5\n"
    "Last error:\nCuda failure 'out of memory'",
    "CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported",
]


@pytest.mark.parametrize("message", OOM_MESSAGES)
def test_allocation_failures_are_oom(message):
    assert is_oom(RuntimeError(message)) and oom_text(message)


@pytest.mark.parametrize("exc", [RuntimeError("mat1 and mat2 shapes cannot be multiplied"), ValueError("out of memory"),
                                 RuntimeError("cuDNN error: CUDNN_STATUS_NOT_SUPPORTED")])
def test_other_errors_are_not(exc):
    assert not is_oom(exc)


def test_torch_oom_error_is_oom():
    assert is_oom(torch.OutOfMemoryError("whatever"))


def test_batch_search_treats_a_cublas_alloc_failure_as_the_limit():
    def trial(batch):
        if batch > 24:
            raise RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")

    search = largest_batch_search(trial, start=1, limit=256)
    assert search.largest == 24 and any(t.status == "oom" for t in search.trials)


def test_batch_search_lets_a_real_bug_through():
    def trial(batch):
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    with pytest.raises(RuntimeError, match="shapes"):
        largest_batch_search(trial)
