"""Largest batch that trains without running out of memory, found by trying (GPU only).

Doubling from `start` until a trial raises an out-of-memory error (or `limit` is reached),
then bisection between the last batch that ran (0 if none) and the first that did not, so a
`start` that is already too large still finds the answer below it. Every trial is a
result (status "passed" or "oom"), never a crash. The trial itself is a callable, so the
search runs on a CPU in tests with a fake that raises `torch.OutOfMemoryError`; on a GPU
`cuda_trial` runs two real optimizer steps (the second with optimizer state allocated).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from ..harness.oom import is_oom, release_device_memory
from ..records.record import Record

__all__ = ["BatchTrial", "BatchSearch", "largest_batch_search", "cuda_trial", "search_records"]

OOM_ERRORS: tuple[type[BaseException], ...] = (torch.OutOfMemoryError,)


@dataclass(frozen=True)
class BatchTrial:
    batch: int
    status: str  # "passed" or "oom"
    message: str | None = None  # the OOM message, first line


@dataclass
class BatchSearch:
    largest: int | None  # None: even `start` ran out of memory
    trials: list[BatchTrial] = field(default_factory=list)
    hit_limit: bool = False  # `limit` ran: the real largest may be higher


def largest_batch_search(
    trial: Callable[[int], None], start: int = 1, limit: int = 4096, oom_errors=OOM_ERRORS
) -> BatchSearch:
    search = BatchSearch(largest=None)

    def ok(batch: int) -> bool:
        failed = None
        try:
            trial(batch)
        except (RuntimeError, *oom_errors) as exc:
            if not (isinstance(exc, oom_errors) or is_oom(exc)):
                raise
            failed = str(exc).splitlines()[0] if str(exc) else "out of memory"
        # after the except block: its traceback no longer pins the failed trial's tensors
        release_device_memory()
        search.trials.append(BatchTrial(batch, "oom", failed) if failed else BatchTrial(batch, "passed"))
        return failed is None

    good, bad = 0, None
    batch = max(1, start)
    while batch <= limit:
        if not ok(batch):
            bad = batch
            break
        good, batch = batch, batch * 2
    if bad is None:  # doubling passed `limit` without an OOM: try `limit` itself
        if good == limit or ok(limit):
            search.largest, search.hit_limit = limit, True
            return search
        bad = limit
    while bad - good > 1:
        mid = (good + bad) // 2
        if ok(mid):
            good = mid
        else:
            bad = mid
    search.largest = good or None
    return search


# optimizer state appears at step 1 and the caching allocator fragments over the next few: a
# batch that survives 2 steps can still fail at step 4
TRIAL_STEPS = 6


def cuda_trial(workload: str, size: str, precision: str) -> Callable[[int], None]:
    """A trial that builds the workload at `batch` on cuda:0 and runs TRIAL_STEPS optimizer steps."""
    from ..harness.run import RunConfig, build_trainer

    def trial(batch: int) -> None:
        trainer = build_trainer(RunConfig(workload, size, precision, batch_size=batch, steps=TRIAL_STEPS, warmup=0,
                                          device="cuda:0", num_workers=0))
        try:
            with trainer.precision.context(trainer.device):
                for _ in range(TRIAL_STEPS):
                    trainer.step()
            torch.cuda.synchronize()
        finally:
            del trainer

    return trial


def search_records(search: BatchSearch, workload: str, size: str, precision: str, gpu: str) -> list[Record]:
    """One `memory` record per trial (status passed / oom) for the results file."""
    return [
        Record(
            test=f"trainbench largest-batch {workload} {size} {precision} batch={t.batch}",
            kind="memory", workload=workload, size=size, precision=precision, batch_size=t.batch, gpu=gpu,
            status=t.status, message=t.message,
            config={"largest_batch": search.largest, "search_hit_limit": search.hit_limit},
        )
        for t in search.trials
    ]
