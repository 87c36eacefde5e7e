"""The resumable epoch iterator over a StatefulDataLoader: a fresh process continuing from a
saved state sees exactly the batches the uninterrupted iterator would have, mid-epoch, at an
epoch end, after repeated resumes, with and without loader workers."""

import io

import pytest
import torch
from hypothesis import given, settings, strategies as st
from torch.utils.data import Dataset
from torchdata.stateful_dataloader.sampler import StatefulDistributedSampler

from trainbench.data import LoaderConfig, make_loader
from trainbench.harness.epochs import Epochs


class _Indices(Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"i": i}


def _epochs(workers: int) -> Epochs:
    """As plugin/checkpoint/resumable.py builds it: a set_epoch sampler seeded per epoch."""
    sampler = StatefulDistributedSampler(_Indices(), num_replicas=1, rank=0, shuffle=True, seed=7)
    return Epochs(make_loader(_Indices(), LoaderConfig(batch_size=3, num_workers=workers, seed=7), sampler))


def _take(e: Epochs, n: int) -> list:
    return [next(e)["i"].tolist() for _ in range(n)]


def _through_disk(state):
    buf = io.BytesIO()
    torch.save(state, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def test_epochs_reshuffle_and_drop_the_partial_batch():
    got = _take(_epochs(0), 6)  # 10 samples, batch 3, drop_last: 3 batches per epoch
    assert all(len(b) == 3 for b in got)
    assert got[:3] != got[3:6]
    assert len(set(sum(got[:3], []))) == 9


def test_order_does_not_depend_on_the_worker_count():
    assert _take(_epochs(0), 7) == _take(_epochs(2), 7)


@settings(max_examples=8, deadline=None)
@given(cuts=st.lists(st.integers(0, 10), min_size=1, max_size=3).map(sorted), workers=st.sampled_from([0, 1]))
def test_resume_anywhere_any_number_of_times(cuts, workers):
    total = 11
    reference = _take(_epochs(0), total)
    seen, e, done = [], _epochs(workers), 0
    for cut in cuts:
        seen += _take(e, cut - done)
        state = _through_disk(e.state_dict())
        e = _epochs(workers)
        e.load_state_dict(state)
        done = cut
    seen += _take(e, total - done)
    assert seen == reference


def test_resume_exactly_at_an_epoch_end_starts_the_next_epoch():
    reference = _take(_epochs(0), 6)
    e = _epochs(0)
    first = _take(e, 3)
    state = e.state_dict()
    assert state["epoch"] == 0  # the epoch's last batch was taken; the next fetch opens epoch 1
    e2 = _epochs(0)
    e2.load_state_dict(state)
    assert first + _take(e2, 3) == reference and e2.epoch == 1


def test_empty_loader_is_an_error():
    e = Epochs(make_loader(_Indices(), LoaderConfig(batch_size=11)))
    with pytest.raises(ValueError, match="no batch"):
        next(e)
