"""One item of the preflight checklist: what was checked, the verdict, why, and the fix.

Statuses, in order of severity:
    pass  the item is fine
    warn  it works, but something will cost time or money at scale (the fix says what)
    fail  it will not work, or gives wrong numbers; `trainbench preflight` exits 1
    n/a   the item does not apply here (no GPU on a CPU machine, one GPU for NCCL, ...)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

__all__ = ["Check", "STATUSES", "PASS", "WARN", "FAIL", "NA", "worst", "counts"]

PASS, WARN, FAIL, NA = "pass", "warn", "fail", "n/a"
STATUSES = (PASS, WARN, FAIL, NA)
_SEVERITY = {NA: 0, PASS: 1, WARN: 2, FAIL: 3}


@dataclass(frozen=True)
class Check:
    name: str  # stable identifier, e.g. "cuda_driver", "grad_accum" (records and tests match on it)
    group: str  # "environment", "memory" or "pipeline"
    status: str  # one of STATUSES
    reason: str  # what was found, with the numbers
    fix: str = ""  # what to do about it; empty when there is nothing to do
    workload: str | None = None  # pipeline and memory items belong to a workload
    metrics: dict[str, Any] = field(default_factory=dict)  # measured numbers behind the verdict

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"check {self.name}: status {self.status!r} not in {STATUSES}")

    @property
    def failed(self) -> bool:
        return self.status == FAIL


def worst(checks: Iterable[Check]) -> str:
    """The most severe status (n/a for an empty list)."""
    return max((c.status for c in checks), key=_SEVERITY.__getitem__, default=NA)


def counts(checks: Iterable[Check]) -> dict[str, int]:
    out = dict.fromkeys(STATUSES, 0)
    for c in checks:
        out[c.status] += 1
    return out
