"""Endless batches over epochs of a `StatefulDataLoader`, resumable mid-epoch.

`cycle(loader)` is a generator, and a generator cannot be checkpointed. `Epochs` holds the
loader and the epoch counter, so a checkpoint can store both and a fresh process can continue
with exactly the batch the interrupted one would have fetched next:

    state = epochs.state_dict()          # {"epoch": int, "loader": loader state or None}
    epochs.load_state_dict(state)        # before the first next()

Each epoch calls `sampler.set_epoch(epoch)` when the sampler has it (DistributedSampler and
torchdata's StatefulDistributedSampler): the shuffle order of epoch e is then a function of
(seed, e), not of a generator's history. A run that must resume exactly uses
StatefulDistributedSampler (plugin/checkpoint/resumable.py does): with the loader's default
shuffling, torchdata 0.11 can change the order of the epoch after a resume
(meta-pytorch/data#1437; tests/checkpoint/test_resume_epochs.py).
"""

from __future__ import annotations

from typing import Any, Iterator

__all__ = ["Epochs"]


class Epochs(Iterator):
    def __init__(self, loader: Any):
        self.loader = loader  # a StatefulDataLoader (anything with state_dict/load_state_dict)
        self.epoch = 0  # epochs started before the current one
        self._it: Iterator | None = None
        self._loaded: dict[str, Any] | None = None  # loader state loaded but not yet iterated

    def __iter__(self) -> "Epochs":
        return self

    def __next__(self) -> Any:
        # At most two tries: the rest of the current epoch (empty when a resume lands exactly on
        # an epoch end), then a fresh epoch; a fresh epoch without a batch is an error.
        for _ in range(2):
            if self._it is None:
                set_epoch = getattr(getattr(self.loader, "sampler", None), "set_epoch", None)
                if set_epoch is not None:
                    set_epoch(self.epoch)
                self._it = iter(self.loader)
                self._loaded = None
            try:
                return next(self._it)
            except StopIteration:
                self._it = None
                self.epoch += 1
        raise ValueError("the data loader produced no batch: data set smaller than one batch?")

    def state_dict(self) -> dict[str, Any]:
        # Between next() calls an epoch is always open, except before the first batch (of the
        # run, or after a load: then the loaded position is still the position).
        loader = self.loader.state_dict() if self._it is not None else self._loaded
        return {"epoch": self.epoch, "loader": loader}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.epoch = int(state["epoch"])
        self._it = None
        self._loaded = state.get("loader")
        if self._loaded is not None:
            self.loader.load_state_dict(self._loaded)
