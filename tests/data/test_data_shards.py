"""Shards: deterministic from the seed, faithful to the workload's samples, realistic sizes;
the shard-aware sampler; `trainbench data prepare`."""

from __future__ import annotations

import fsspec
import pytest
import torch

from trainbench.cli import main
from trainbench.data.backends import MemoryOpener, parse_storage
from trainbench.data.codec import render_jpeg
from trainbench.data.dataset import ShardDataset
from trainbench.data.sampler import ShardShuffle
from trainbench.data.shards import prepare_shards, read_manifest
from trainbench.workloads import get_workload


def test_same_seed_same_bytes_other_seed_other_bytes():
    fs = fsspec.filesystem("memory")
    a = prepare_shards(fs, "/t/a", "resnet50", "tiny", 1, 24, processes=1)
    b = prepare_shards(fs, "/t/b", "resnet50", "tiny", 1, 24, processes=2)
    c = prepare_shards(fs, "/t/c", "resnet50", "tiny", 2, 24, processes=1)
    shard = a.shards[0]
    assert fs.cat_file(f"/t/a/{shard}") == fs.cat_file(f"/t/b/{shard}")
    assert fs.cat_file(f"/t/a/{shard}") != fs.cat_file(f"/t/c/{shard}")
    assert a.to_json() == b.to_json()


@pytest.mark.parametrize("workload", ["bert-base", "gpt-small"])
def test_token_samples_come_back_exactly(workload):
    fs = fsspec.filesystem("memory")
    m = prepare_shards(fs, f"/t/{workload}", workload, "tiny", 0, 20, processes=1)
    ds = ShardDataset(MemoryOpener(), f"/t/{workload}", m)
    ref = get_workload(workload).dataset("tiny", 20, 0)
    for i in range(20):
        got, want = ds[i], ref[i]
        assert got.keys() == want.keys()
        for k in want:
            assert got[k].dtype == want[k].dtype and torch.equal(got[k], want[k])


def test_images_decode_to_the_models_input_with_the_synthetic_labels():
    fs = fsspec.filesystem("memory")
    m = prepare_shards(fs, "/t/img", "resnet50", "tiny", 0, 16, processes=1)
    ds = ShardDataset(MemoryOpener(), "/t/img", m, seed=0)
    ref = get_workload("resnet50").dataset("tiny", 16, 0)
    for i in range(16):
        s = ds[(0, i)]
        assert s["image"].shape == ref[i]["image"].shape and s["image"].dtype == torch.uint8
        assert torch.equal(s["label"], ref[i]["label"])
    assert torch.equal(ds[(0, 3)]["image"], ds[(0, 3)]["image"])  # crops: a function of (seed, epoch, index)
    assert not torch.equal(ds[(0, 3)]["image"], ds[(1, 3)]["image"])
    assert [f.ext for f in m.fields] == ["jpg", "cls"]


def test_full_size_jpegs_are_imagenet_like():
    """ImageNet-1k train averages ~110 KB per JPEG; the full preset's images should be close."""
    sizes = [len(render_jpeg(224, 0, i)) for i in range(4)]
    assert all(80_000 < s < 150_000 for s in sizes), sizes
    assert len(render_jpeg(32, 0, 0)) < 10_000  # tiny stays small


def test_sampler_is_a_permutation_per_epoch_and_keeps_shard_locality():
    sizes = [10] * 12
    sampler = ShardShuffle(sizes, seed=3, window=4)
    e0, e1 = sampler.order(0), sampler.order(1)
    assert sorted(e0) == list(range(120)) == sorted(e1) and e0 != e1
    assert sampler.order(0) == e0  # a function of (seed, epoch)
    for w in range(3):  # each block of 40 reads comes from 4 shards only
        assert len({i // 10 for i in e0[w * 40 : (w + 1) * 40]}) == 4
    items = list(iter(sampler))
    assert items[0] == (0, e0[0]) and list(iter(sampler))[0] == (1, e1[0])


def test_cli_prepares_once_and_reuses(tmp_path, capsys):
    to = str(tmp_path / "shards")
    args = ["data", "prepare", "--workload", "gpt-small", "--size", "tiny", "--count", "10", "--to", to]
    assert main(args) == 0
    assert "10 samples of gpt-small/tiny" in capsys.readouterr().out
    assert main(args) == 0
    assert "already prepared" in capsys.readouterr().out
    assert read_manifest(fsspec.filesystem("file"), to).count == 10


def test_cli_rejects_unknown_workload_and_scheme(capsys):
    assert main(["data", "prepare", "--workload", "nope", "--to", "memory://x"]) == 2
    assert "known: bert-base" in capsys.readouterr().err
    assert main(["data", "prepare", "--workload", "resnet50", "--to", "ftp://host/x"]) == 2
    assert "unsupported scheme" in capsys.readouterr().err


def test_cached_backend_with_workers_reads_what_the_backend_holds(tmp_path):
    """+cache: two workers share one cache directory; each shard is downloaded once, completely."""
    from trainbench.data import StorageSettings
    from trainbench.data import context as storage
    from trainbench.data.loader import LoaderConfig
    from trainbench.data.pipeline import storage_loader

    storage.configure(StorageSettings(cache_root=str(tmp_path)))
    try:
        cfg = LoaderConfig(batch_size=4, num_workers=2, seed=1)
        plain = list(storage_loader(parse_storage("local"), "gpt-small", "tiny", 48, 0, cfg))
        loader = storage_loader(parse_storage("local+cache"), "gpt-small", "tiny", 48, 0, cfg)
        cold, warm = list(loader), list(loader)
        cache_dir = loader.trainbench_data.cache_dir
    finally:
        storage.close()
    assert all(torch.equal(a["tokens"], b["tokens"]) for a, b in zip(plain, cold))
    assert sorted(torch.cat([b["tokens"][:, 0] for b in warm]).tolist()) == \
        sorted(torch.cat([b["tokens"][:, 0] for b in cold]).tolist())
    import os
    files = os.listdir(cache_dir)
    assert not [f for f in files if f.endswith(".part")]
    assert len([f for f in files if not f.endswith(".lock")]) == 8  # every shard, once
