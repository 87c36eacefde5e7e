"""What a workload is: a model preset, seeded synthetic data of the right shape, a loss, an
optimizer and the size of one epoch (for cost).

A batch is a dict of tensors exactly as a DataLoader collates the samples of
`dataset(size, n, seed)`; `loss(model, batch)` runs forward + loss on a batch already on the
device. Images travel as uint8 (the real pipeline's decode output) and are normalized on the
device inside `loss`, so every storage backend hands the step the same kind of batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import torch
from torch import nn
from torch.utils.data import Dataset

__all__ = ["Workload"]

Batch = Mapping[str, torch.Tensor]


@dataclass(frozen=True)
class Workload:
    name: str
    # size ("tiny", "full", ...) -> a freshly initialised model on the CPU in fp32
    model: Callable[[str], nn.Module]
    # (size, num_samples, seed) -> map-style Dataset of dict samples; same seed, same samples
    dataset: Callable[[str, int, int], Dataset]
    # (model, batch on device) -> scalar loss (mean over the batch)
    loss: Callable[[nn.Module, Batch], torch.Tensor]
    # (parameters, size) -> optimizer with the workload's reference hyper-parameters
    optimizer: Callable[[Iterable[nn.Parameter], str], torch.optim.Optimizer]
    # size -> analytic training FLOPs per sample (convention: 3 x forward, a multiply-add = 2)
    flops_per_sample: Callable[[str], float]
    # samples in one epoch of the reference data set, for cost per epoch
    epoch_samples: int
    # size -> default micro-batch size
    batch_size: Mapping[str, int]
    # size -> tokens per sample for text workloads (tokens/s); None for images
    tokens_per_sample: Callable[[str], int] | None = None
    # where epoch_samples comes from, shown in reports
    epoch_source: str = ""
    description: str = ""
    sizes: tuple[str, ...] = ("tiny", "full")
    # size -> {"batch_key": bytes per sample on the wire}, used by storage and memory estimates
    extra: Mapping[str, object] = field(default_factory=dict)
    # (model, path) -> None: load a local pretrained checkpoint (--weights); None = unsupported
    load_weights: Callable[[nn.Module, str], None] | None = None
    # batch -> how many items `loss` averages over (e.g. response tokens). Set when that count
    # varies between micro-batches: gradient accumulation then weights each micro-batch loss
    # by its share of the whole step's items instead of 1/k. None = every sample counts alike.
    loss_items: Callable[[Batch], torch.Tensor] | None = None
    # module-name suffixes LoRA adapts (--finetune=lora); empty = the workload has no LoRA mode
    lora_targets: tuple[str, ...] = ()

    def default_batch_size(self, size: str) -> int:
        return int(self.batch_size.get(size, next(iter(self.batch_size.values()))))
