"""The training step: k micro-batches (gradient accumulation) -> one optimizer step.

Nothing in `step()` that a plain PyTorch training loop would not do, except three clock marks
per micro-batch around the input fetch and its host-to-device copy (perf_counter values or CUDA
events: no synchronization).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Mapping

import torch
from torch import nn

from .precision import Precision
from .timing import DeviceClock, Mark
from ..workloads.spec import Workload

__all__ = ["Trainer", "to_device"]


def to_device(batch: Mapping[str, Any], device: torch.device) -> dict[str, Any]:
    # non_blocking: with pinned host memory the copy overlaps with compute on CUDA
    return {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}


class Trainer:
    def __init__(
        self,
        workload: Workload,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        batches: Iterator[Mapping[str, Any]],
        device: torch.device,
        precision: Precision,
        grad_accum: int = 1,  # micro-batches per optimizer step
        scheduler: Any | None = None,
    ):
        self.workload = workload
        self.model = model
        self.optimizer = optimizer
        self.batches = batches
        self.device = device
        self.precision = precision
        self.grad_accum = grad_accum
        self.scheduler = scheduler
        self.scaler = precision.scaler(device)
        self.clock = DeviceClock(device)
        self.steps_done = 0  # optimizer steps taken (checkpointing resumes from it)
        # data-parallel ranks: local item count -> (count summed over ranks, ranks); None = one process
        self.reduce_items: Any | None = None
        self.model.train()  # once, as a plain loop does per epoch; callers that eval() switch back

    def _no_sync(self, last: bool):
        # DDP: skip the gradient all-reduce on all but the last micro-batch
        if not last and hasattr(self.model, "no_sync"):
            return self.model.no_sync()
        return contextlib.nullcontext()

    def _fetch(self, marks: list[tuple[Mark, Mark, Mark]] | None) -> dict[str, Any]:
        if marks is None:
            return to_device(next(self.batches), self.device)
        before = self.clock.mark()
        host = next(self.batches)
        got = self.clock.mark()
        batch = to_device(host, self.device)
        marks.append((before, got, self.clock.mark()))
        return batch

    def step(self, marks: list[tuple[Mark, Mark, Mark]] | None = None) -> torch.Tensor:
        """One optimizer step; returns the mean micro-batch loss as a 0-d device tensor.

        `marks` (optional) receives one (before_fetch, after_fetch, after_copy) triple per
        micro-batch: the wait for the loader and the host-to-device copy of that micro-batch.
        """
        self.optimizer.zero_grad(set_to_none=True)
        k = self.grad_accum
        losses = []
        weights = None
        if self.workload.loss_items is not None and (k > 1 or self.reduce_items is not None):
            # the loss averages over a varying count (response tokens): fetch the step's k
            # micro-batches first so each is weighted by its share of the step's items (on
            # every rank, when data-parallel ranks average their gradients)
            fetched = [self._fetch(marks) for _ in range(k)]
            items = torch.stack([self.workload.loss_items(b).float() for b in fetched])
            total, ranks = items.sum(), 1
            if self.reduce_items is not None:
                total, ranks = self.reduce_items(total)
            weights = items * ranks / total.clamp(min=1.0)
        for micro in range(k):
            batch = fetched[micro] if weights is not None else self._fetch(marks)
            with self._no_sync(micro == k - 1):
                with self.precision.autocast(self.device):
                    loss = self.workload.loss(self.model, batch)
                    if weights is not None:
                        loss = loss * weights[micro]  # the mean over every item of the k micro-batches
                    elif k > 1:
                        loss = loss / k  # the mean over all k micro-batches
                if self.scaler is not None:
                    self.scaler.scale(loss).backward()
                else:
                    loss.backward()
            losses.append(loss.detach())
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()
        self.steps_done += 1
        return losses[0].float() if k == 1 else torch.stack(losses).float().sum()
