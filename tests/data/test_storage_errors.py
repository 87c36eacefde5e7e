"""Must-show 5: bad input fails where it enters, in seconds, naming what and the fix."""

from __future__ import annotations

import socket
import time

import fsspec
import pytest
import torch

from trainbench.data.backends import LocalOpener, parse_storage, parse_storage_list
from trainbench.data.dataset import CorruptShard, ShardDataset, SkipCounter, collate_skipping
from trainbench.data.loader import LoaderConfig, make_loader
from trainbench.data.s3 import S3Target, check_reachable
from trainbench.data.sampler import ShardShuffle
from trainbench.data.shards import prepare_shards
from trainbench.errors import InputError


def test_unknown_backend_lists_the_known_ones():
    with pytest.raises(InputError) as exc:
        parse_storage("floppy")
    msg = str(exc.value)
    assert "--storage=floppy" in msg
    for name in ("memory", "local", "s3", "gp3", "essd-pl1", "throttle:<MB/s>,<IOPS>", "+cache"):
        assert name in msg


@pytest.mark.parametrize("bad", ["throttle:20", "throttle:fast,500", "throttle:0,500", "synthetic+cache"])
def test_malformed_backends_say_how_to_write_them(bad):
    with pytest.raises(InputError, match="--storage"):
        parse_storage(bad)


def test_storage_list_keeps_the_throttle_comma():
    specs = parse_storage_list("memory,throttle:20,500,s3+cache,throttle:1.5,30+cache,gp3")
    assert [s.text for s in specs] == ["memory", "throttle:20,500", "s3+cache", "throttle:1.5,30+cache", "gp3"]
    assert specs[1].limits.bytes_per_s == 20e6 and specs[1].limits.iops == 500
    assert specs[3].cached and specs[4].limits.iops == 3000


def test_unknown_backend_is_a_usage_error_in_pytest(pytester):
    pytester.makepyfile(test_x="def test_x(): pass")
    result = pytester.runpytest("--storage=memory,floppy", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown storage backend --storage=floppy; known: *memory*s3*"])


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_refused_s3_endpoint_errors_within_seconds():
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=r"cannot reach S3 endpoint http://127\.0\.0\.1:\d+.*--s3-endpoint"):
        check_reachable(S3Target(f"http://127.0.0.1:{_closed_port()}", "b", {"key": "k", "secret": "s"}))
    assert time.perf_counter() - t0 < 10


def test_silent_s3_endpoint_errors_within_ten_seconds():
    """A server that accepts the connection and never answers: the read timeout ends it."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        t0 = time.perf_counter()
        with pytest.raises(InputError, match="cannot reach S3 endpoint"):
            check_reachable(S3Target(f"http://127.0.0.1:{server.getsockname()[1]}", "b", {"key": "k", "secret": "s"}))
        assert time.perf_counter() - t0 < 10


def test_unreachable_endpoint_is_a_usage_error_in_pytest(pytester):
    pytester.makepyfile(test_x="def test_x(): pass")
    t0 = time.perf_counter()
    result = pytester.runpytest("--storage=s3", f"--s3-endpoint=http://127.0.0.1:{_closed_port()}",
                                "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot reach S3 endpoint http://127.0.0.1:*"])
    assert time.perf_counter() - t0 < 10


@pytest.fixture
def shards(tmp_path):
    root = str(tmp_path / "ds")
    manifest = prepare_shards(fsspec.filesystem("file"), root, "resnet50", "tiny", 0, 32, processes=1)
    return root, manifest


def _dataset(shards, skip=None):
    root, manifest = shards
    return ShardDataset(LocalOpener(), root, manifest, skip_corrupt=skip, label="local")


def test_truncated_shard_names_shard_and_sample_key(shards):
    root, manifest = shards
    ds = _dataset(shards)
    last = manifest.count - 1
    shard, start, end = ds.locate(last)
    with open(f"{root}/{shard}", "r+b") as f:
        f.truncate(end - 100)
    with pytest.raises(CorruptShard) as exc:
        ds[last]
    msg = str(exc.value)
    assert shard in msg and f"sample key {last:09d}" in msg and "truncated" in msg and "--skip-corrupt" in msg


def test_corrupt_jpeg_names_shard_and_sample_key(shards):
    root, manifest = shards
    ds = _dataset(shards)
    shard, start, end = ds.locate(5)
    with open(f"{root}/{shard}", "r+b") as f:
        f.seek(start + 512 + 20)  # inside the first member's data: the JPEG header
        f.write(b"\x00" * 64)
    with pytest.raises(CorruptShard, match=f"{shard}.*sample key 000000005"):
        ds[5]


def test_corrupt_sample_in_a_worker_reaches_the_user_with_its_names(shards):
    root, manifest = shards
    ds = _dataset(shards)
    shard, start, end = ds.locate(7)
    with open(f"{root}/{shard}", "r+b") as f:
        f.seek(start + 512 + 20)
        f.write(b"\x00" * 64)
    loader = make_loader(ds, LoaderConfig(batch_size=4, num_workers=1), sampler=ShardShuffle([manifest.count]))
    with pytest.raises(CorruptShard, match=f"{shard}.*sample key 000000007"):
        list(loader)


def test_skip_corrupt_counts_and_drops_the_sample(shards):
    root, manifest = shards
    counter = SkipCounter()
    ds = _dataset(shards, skip=counter)
    shard, start, end = ds.locate(3)
    with open(f"{root}/{shard}", "r+b") as f:
        f.seek(start + 512 + 20)
        f.write(b"\x00" * 64)
    loader = make_loader(ds, LoaderConfig(batch_size=4, num_workers=1), sampler=ShardShuffle([manifest.count]),
                         collate_fn=collate_skipping)
    batches = list(loader)
    assert sum(len(b["label"]) for b in batches) == manifest.count - 1
    assert counter.value == 1
    assert all(b["image"].dtype == torch.uint8 for b in batches)
