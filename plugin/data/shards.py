"""A workload's synthetic data set materialized as tar shards in the webdataset layout.

    <root>/shard-000000.tar   members {key}.{field}.{ext}, one key per sample, in index order
    <root>/manifest.json      fields, shards and each sample's byte range inside its shard

Written last, the manifest marks a complete data set: a crashed prepare leaves none and is
redone. The byte ranges let a map-style data set read one sample with one ranged read (an HTTP
Range GET on S3), so shuffling, multi-worker loading and exact resume need no sequential scan.
Everything is a function of (workload, size, seed, count): same inputs, same bytes.
"""

from __future__ import annotations

import io
import json
import math
import multiprocessing
import os
import tarfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from .codec import FieldSpec, encode_field, field_specs

__all__ = ["Manifest", "prepare_shards", "read_manifest", "dataset_key", "FORMAT"]

FORMAT = "trainbench-shards/1"
MANIFEST = "manifest.json"
SHARD_BYTES = 64 * 2**20  # target shard size: webdataset/streaming guidance is 10s-100s of MB
MIN_SHARDS = 8  # small data sets still get several shards, so shard shuffling is exercised


@dataclass
class Manifest:
    format: str
    workload: str
    size: str
    seed: int
    count: int  # samples
    fields: list[FieldSpec]
    shards: list[str]  # file names under the root, in index order
    shard_bytes: list[int]  # size of each shard file
    ranges: list[list[list[int]]]  # per shard, per sample: [start, end) byte range of its members
    keys_start: list[int]  # global index of each shard's first sample

    @property
    def total_bytes(self) -> int:
        return sum(self.shard_bytes)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "Manifest":
        d = json.loads(text)
        d["fields"] = [FieldSpec(f["name"], f["ext"], f["dtype"], tuple(f["shape"])) for f in d["fields"]]
        return cls(**d)


def dataset_key(workload: str, size: str, seed: int, count: int) -> str:
    """Cache key of a prepared data set: a relative path, one directory per distinct data set."""
    return f"{workload}/{size}/seed{seed}-n{count}-v{FORMAT.rsplit('/', 1)[1]}"


def _key(index: int) -> str:
    return f"{index:09d}"


def _build_shard(workload: str, size: str, seed: int, count: int, first: int,
                 last: int) -> tuple[bytes, list[list[int]]]:
    """Tar bytes of samples [first, last) and each sample's [start, end) byte range."""
    from ..workloads import get_workload

    ds = get_workload(workload).dataset(size, count, seed)
    specs = field_specs(ds[0])
    buf = io.BytesIO()
    ranges = []
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for i in range(first, last):
            sample = ds[i]
            start = buf.tell()
            for spec in specs:
                data = encode_field(spec, sample[spec.name], seed, i)
                info = tarfile.TarInfo(spec.member(_key(i)))
                info.size, info.mtime, info.mode = len(data), 0, 0o644  # mtime 0: same bytes every time
                tar.addfile(info, io.BytesIO(data))
            ranges.append([start, buf.tell()])
    return buf.getvalue(), ranges


def _estimate_sample_bytes(workload: str, size: str, seed: int, count: int) -> int:
    data, _ = _build_shard(workload, size, seed, count, 0, min(4, count))
    return max(1, len(data) // min(4, count))


def prepare_shards(fs: Any, root: str, workload: str, size: str, seed: int, count: int,
                   processes: int | None = None, shard_bytes: int = SHARD_BYTES) -> Manifest:
    """Write the shards and the manifest under `root` on fsspec filesystem `fs`."""
    from ..workloads import get_workload

    if count < 1:
        raise ValueError("count must be >= 1")
    specs = field_specs(get_workload(workload).dataset(size, count, seed)[0])
    per_shard = max(1, min(shard_bytes // _estimate_sample_bytes(workload, size, seed, count),
                           math.ceil(count / MIN_SHARDS)))
    bounds = [(a, min(count, a + per_shard)) for a in range(0, count, per_shard)]
    names = [f"shard-{k:06d}.tar" for k in range(len(bounds))]
    fs.makedirs(root, exist_ok=True)
    sizes, ranges = [], []
    procs = processes if processes is not None else min(len(bounds), os.cpu_count() or 1)
    jobs = [(workload, size, seed, count, a, b) for a, b in bounds]
    if procs > 1 and "fork" in multiprocessing.get_all_start_methods():
        # fork: children see workloads registered from conftests, too
        with ProcessPoolExecutor(procs, mp_context=multiprocessing.get_context("fork")) as pool:
            built = pool.map(_build_shard_star, jobs)
            for name, (data, r) in zip(names, built):
                fs.pipe_file(f"{root}/{name}", data)
                sizes.append(len(data))
                ranges.append(r)
    else:
        for name, job in zip(names, jobs):
            data, r = _build_shard(*job)
            fs.pipe_file(f"{root}/{name}", data)
            sizes.append(len(data))
            ranges.append(r)
    manifest = Manifest(FORMAT, workload, size, seed, count, specs, names, sizes, ranges, [a for a, _ in bounds])
    fs.pipe_file(f"{root}/{MANIFEST}", manifest.to_json().encode())
    return manifest


def _build_shard_star(job: tuple) -> tuple[bytes, list[list[int]]]:
    return _build_shard(*job)


def read_manifest(fs: Any, root: str) -> Manifest | None:
    """The manifest under `root`, or None when there is no complete data set there."""
    path = f"{root}/{MANIFEST}"
    try:
        text = fs.cat_file(path).decode()
    except FileNotFoundError:
        return None
    try:
        m = Manifest.from_json(text)
    except (ValueError, TypeError, KeyError):
        return None  # half-written or foreign: prepare again
    return m if m.format == FORMAT else None
