"""What one training step costs a device: FLOPs and device-memory bytes per sample.

Generic over workloads: FLOPs come from the workload's analytic `flops_per_sample(size)`
(training = 3 x forward), bytes from its memory estimate (`estimate_memory`: exact model state,
traced saved activations), so a new workload gets a step cost without a table entry here.

Traffic model (bytes that cross device memory per sample at micro-batch `batch`):
  ACTIVATION_PASSES x (activations saved per sample + batch-independent saved bytes / batch)
    saved tensors are written in forward and read in backward; their gradients are written
    and read again: 4 passes
  + STATE_PASSES x (weights + grads + optimizer state) / batch
    weights read in forward and backward, the optimizer reads and writes its state once per step
  + FROZEN_PASSES x frozen weights / batch
    weights that do not train (a LoRA base) are still read in forward and backward
Transient buffers that never leave the caches are not counted; elementwise ops that re-read a
tensor are: the passes are a coarse, stated average, not a kernel-by-kernel count.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .memory import MemoryEstimate

__all__ = ["ACTIVATION_PASSES", "STATE_PASSES", "StepCost", "step_cost", "cost_for", "traced_memory", "trace_error"]

ACTIVATION_PASSES = 4  # saved activations: write fwd, read bwd, grad write, grad read
STATE_PASSES = 3  # weights read fwd + bwd (~2 passes), optimizer update (~1 pass over state)
FROZEN_PASSES = 2  # frozen weights: read in forward and in backward (input gradients), never updated


@dataclass(frozen=True)
class StepCost:
    workload: str
    size: str
    precision: str
    batch: int
    flops_per_sample: float  # training FLOPs (3 x forward)
    bytes_per_sample: float | None  # device-memory traffic; None when the memory estimate is unknown

    def describe(self) -> str:
        mb = "bytes unknown" if self.bytes_per_sample is None else f"{self.bytes_per_sample / 1e6:,.0f} MB"
        return f"{self.flops_per_sample / 1e9:,.1f} GFLOP + {mb} per sample at batch {self.batch}"


def step_cost(workload, size: str, precision: str, batch: int, memory: MemoryEstimate | None) -> StepCost:
    """The step cost of `workload` (a registered Workload) at `size`, `precision`, `batch`."""
    batch = max(1, int(batch))
    nbytes = None
    if memory is not None and memory.state_bytes is not None:
        activations = memory.activation_per_sample_bytes + memory.activation_fixed_bytes / batch
        trained = memory.state_bytes - memory.frozen_param_bytes  # param_bytes holds every weight
        nbytes = (ACTIVATION_PASSES * activations + STATE_PASSES * trained / batch
                  + FROZEN_PASSES * memory.frozen_param_bytes / batch)
    return StepCost(workload.name, size, precision, batch, float(workload.flops_per_sample(size)), nbytes)


_TRACE_ERRORS: dict[tuple[str, str, str], str] = {}  # why an estimate is missing, for reports


@lru_cache(maxsize=64)
def traced_memory(name: str, size: str, precision: str) -> MemoryEstimate | None:
    """The memory estimate of registered workload `name`; None when it is not registered or the
    fake-tensor trace cannot run its model (`trace_error` says why)."""
    from ..errors import InputError
    from ..workloads import get_workload
    from .memory import estimate_memory

    try:
        w = get_workload(name)
    except InputError:
        return None
    try:
        return estimate_memory(w, size, precision)
    except InputError:
        raise  # e.g. an unknown --size: the user's to fix
    except Exception as exc:  # a model the trace cannot run: bytes (and fit) are then unknown
        _TRACE_ERRORS[(name, size, precision)] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        return None


def trace_error(name: str, size: str, precision: str) -> str | None:
    return _TRACE_ERRORS.get((name, size, precision))


def cost_for(name: str, size: str, precision: str, batch: int) -> StepCost | None:
    """Step cost of registered workload `name`; None when it is not registered."""
    from ..errors import InputError
    from ..workloads import get_workload

    try:
        w = get_workload(name)
    except InputError:
        return None
    return step_cost(w, size, precision, batch, traced_memory(name, size, precision))
