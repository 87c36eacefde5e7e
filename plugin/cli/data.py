"""`trainbench data prepare`: materialize a workload's data set as shards on any backend.

    trainbench data prepare --workload resnet50 --size tiny --to ./shards
    trainbench data prepare --workload resnet50 --size full --count 100000 --to s3://bucket/imagenet-like \\
        --s3-endpoint http://127.0.0.1:9000
"""

from __future__ import annotations

import argparse
import time
from urllib.parse import urlparse

import fsspec

from ..data.s3 import S3Target, check_reachable, s3_filesystem
from ..data.shards import prepare_shards, read_manifest
from .types import nonneg_int, positive_int
from ..errors import InputError

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    data = sub.add_parser("data", help="prepare data sets as shards on a storage backend")
    data_sub = data.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    p = data_sub.add_parser("prepare", help="write a workload's synthetic data set as webdataset tar shards")
    p.add_argument("--workload", required=True, help="registered workload, e.g. resnet50")
    p.add_argument("--size", default="tiny", help="model preset the samples are shaped for (tiny, full)")
    p.add_argument("--count", type=positive_int("--count"), default=1024, help="samples to write (default 1024)")
    p.add_argument("--seed", type=nonneg_int("--seed"), default=0)
    p.add_argument("--to", required=True, metavar="URL",
                   help="a directory, memory://path, or s3://bucket/prefix (with --s3-endpoint or AWS's default)")
    p.add_argument("--s3-endpoint", default=None, help="S3 endpoint URL for s3:// targets")
    p.add_argument("--processes", type=positive_int("--processes"), default=None, help="encoder processes (default: one per core)")
    p.add_argument("--force", action="store_true", help="rewrite even if a complete data set is there")
    p.set_defaults(func=_run)


def _target(url: str, endpoint: str | None):
    u = urlparse(url)
    if u.scheme == "s3":
        if not u.netloc:
            raise InputError(f"--to={url}: write s3://<bucket>/<prefix>")
        target = S3Target(endpoint, u.netloc)
        check_reachable(target)
        return s3_filesystem(target), f"{u.netloc}{u.path}".rstrip("/")
    if u.scheme == "memory":
        return fsspec.filesystem("memory"), url.split("://", 1)[1]
    if u.scheme in ("", "file"):
        return fsspec.filesystem("file"), (u.path if u.scheme else url)
    raise InputError(f"--to={url}: unsupported scheme {u.scheme!r}; use a directory, memory:// or s3://")


def _run(args: argparse.Namespace) -> int:
    from ..workloads import get_workload

    get_workload(args.workload)  # unknown -> error listing the known ones
    if args.count < 1:
        raise InputError(f"--count must be >= 1, got {args.count}")
    fs, root = _target(args.to, args.s3_endpoint)
    existing = read_manifest(fs, root)
    same = existing and (existing.workload, existing.size, existing.seed, existing.count) == (
        args.workload, args.size, args.seed, args.count)
    if same and not args.force:
        print(f"{args.to}: already prepared ({existing.count} samples, {len(existing.shards)} shards, "
              f"{existing.total_bytes / 1e6:.1f} MB); --force rewrites it")
        return 0
    t0 = time.perf_counter()
    m = prepare_shards(fs, root, args.workload, args.size, args.seed, args.count, processes=args.processes)
    took = time.perf_counter() - t0
    print(f"{args.to}: {m.count} samples of {args.workload}/{args.size} in {len(m.shards)} shards, "
          f"{m.total_bytes / 1e6:.1f} MB ({m.total_bytes / m.count / 1e3:.1f} KB/sample), {took:.1f} s")
    return 0
