"""Must-show 4: a loader resumed mid-epoch from `state_dict()` yields exactly the batches the
uninterrupted loader would have yielded next -- including the random crops, which depend on
(seed, epoch, index) only."""

from __future__ import annotations

import fsspec
import pytest
import torch

from trainbench.data.backends import LocalOpener
from trainbench.data.dataset import ShardDataset
from trainbench.data.loader import LoaderConfig, make_loader
from trainbench.data.sampler import ShardShuffle
from trainbench.data.shards import prepare_shards

BATCH, COUNT = 4, 40  # 10 batches per epoch


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("shards"))
    manifest = prepare_shards(fsspec.filesystem("file"), root, "resnet50", "tiny", 3, COUNT, processes=1)
    return root, manifest


def _loader(shards, workers: int):
    root, manifest = shards
    ds = ShardDataset(LocalOpener(), root, manifest, seed=3)
    sampler = ShardShuffle([len(r) for r in manifest.ranges], seed=5)
    return make_loader(ds, LoaderConfig(batch_size=BATCH, num_workers=workers, seed=5), sampler=sampler)


def _epochs(loader, n_epochs: int) -> list[dict]:
    return [b for _ in range(n_epochs) for b in loader]


def _same(a: list[dict], b: list[dict]) -> bool:
    return len(a) == len(b) and all(torch.equal(x[k], y[k]) for x, y in zip(a, b) for k in x)


@pytest.mark.parametrize("workers", [0, 1, 2])
def test_resume_twice_mid_epoch_yields_the_uninterrupted_batches(shards, workers):
    reference = _epochs(_loader(shards, workers), 2)  # 20 batches over two epochs
    got: list[dict] = []
    loader = _loader(shards, workers)
    it = iter(loader)
    for stop in (3, 7):  # interrupt twice in epoch 0
        while len(got) < stop:
            got.append(next(it))
        state = loader.state_dict()
        del it
        loader = _loader(shards, workers)  # a fresh loader, as in a new process
        loader.load_state_dict(state)
        it = iter(loader)
    got.extend(it)  # rest of epoch 0
    got.extend(_epochs(loader, 1))  # epoch 1: new order and new crops, same as uninterrupted
    assert _same(got, reference)


def test_resume_in_the_second_epoch(shards):
    reference = _epochs(_loader(shards, 2), 2)
    loader = _loader(shards, 2)
    got = list(loader)
    it = iter(loader)
    got += [next(it) for _ in range(4)]
    state = loader.state_dict()
    fresh = _loader(shards, 2)
    fresh.load_state_dict(state)
    got += list(fresh)
    assert _same(got, reference)


def test_epochs_differ_in_order_and_crops(shards):
    loader = _loader(shards, 0)
    e0, e1 = list(loader), list(loader)
    assert not _same(e0, e1)
    labels0 = torch.cat([b["label"] for b in e0]).sort().values
    labels1 = torch.cat([b["label"] for b in e1]).sort().values
    assert torch.equal(labels0, labels1)  # same samples, different order
