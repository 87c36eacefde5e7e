"""The storage and loader options of the pytest plugin (one call from plugin/options.py)."""

from __future__ import annotations

import argparse
from typing import Any, Callable

from plugin.data.backends import parse_storage_list
from plugin.data.context import StorageSettings
from plugin.errors import InputError
from plugin.option_types import positive_int

__all__ = ["add_options", "settings_from_config", "parse_storage_option", "int_list"]


def parse_storage_option(value: str) -> list[str]:
    try:
        return [s.text for s in parse_storage_list(value)]
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


parse_storage_option.__name__ = "--storage"


def int_list(flag: str, low: int) -> Callable[[str], list[int]]:
    def parse(value: str) -> list[int]:
        try:
            items = [int(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} expects integers, e.g. {flag}=0,2,4; got {value!r}") from None
        if not items or min(items) < low:
            raise argparse.ArgumentTypeError(f"{flag} values must be >= {low}, got {value!r}")
        return list(dict.fromkeys(items))

    parse.__name__ = flag
    return parse


def _yes_no(flag: str) -> Callable[[str], bool]:
    def parse(value: str) -> bool:
        v = value.strip().lower()
        if v in ("1", "yes", "true", "on"):
            return True
        if v in ("0", "no", "false", "off"):
            return False
        raise argparse.ArgumentTypeError(f"{flag} expects yes or no, got {value!r}")

    parse.__name__ = flag
    return parse


def add_options(group: Any) -> None:
    group.addoption("--storage", type=parse_storage_option, default=None,
                    help="comma list of storage backends -> one storage benchmark per backend: synthetic, memory, "
                         "local, s3, gp3, st1, cloud-ssd, essd-pl0..essd-pl3, throttle:<MB/s>,<IOPS>, and any of "
                         "them with +cache (e.g. s3+cache). Default: local for bench/test_storage.py; "
                         "training benchmarks elsewhere use synthetic data")
    group.addoption("--num-workers", type=int_list("--num-workers", 0), default=None,
                    help="loader worker processes; a comma list sweeps them in the storage benchmarks "
                         "(default: 1 on CPU, 0,2,4,8 on GPU; training elsewhere: the first value, or auto)")
    group.addoption("--prefetch-factor", type=positive_int("--prefetch-factor"), default=None,
                    help="batches in flight per loader worker (torch default 2)")
    group.addoption("--pin-memory", type=_yes_no("--pin-memory"), default=None,
                    help="page-locked host batches, yes/no (default: yes on CUDA)")
    group.addoption("--persistent-workers", action="store_true", default=False,
                    help="keep loader workers alive across epochs")
    group.addoption("--data-dir", default=None, metavar="DIR",
                    help="directory for the shards of local and throttled backends "
                         "(default .trainbench-cache/data under the rootdir)")
    group.addoption("--s3-endpoint", default=None, metavar="URL",
                    help="S3 endpoint for --storage=s3 (credentials from AWS_* variables); default: a moto "
                         "server started on a free loopback port for the session")
    group.addoption("--s3-bucket", default="trainbench", metavar="NAME",
                    help="bucket holding the shards on S3 (default trainbench)")
    group.addoption("--skip-corrupt", action="store_true", default=False,
                    help="skip and count corrupt or truncated samples instead of failing on the first")


def settings_from_config(config: Any) -> StorageSettings:
    opt = config.getoption
    return StorageSettings(
        cache_root=str(config.rootpath / ".trainbench-cache"),
        data_dir=opt("--data-dir"),
        s3_endpoint=opt("--s3-endpoint"),
        s3_bucket=opt("--s3-bucket"),
        skip_corrupt=opt("--skip-corrupt"),
        num_workers=opt("--num-workers"),
        prefetch_factor=opt("--prefetch-factor"),
        pin_memory=opt("--pin-memory"),
        persistent_workers=opt("--persistent-workers"),
        storage=opt("--storage") or [],
    )
