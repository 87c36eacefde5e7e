"""Command-line options of the distributed benchmarks (added to the "trainbench" group)."""

from __future__ import annotations

import argparse
from typing import Any, Callable

from plugin.errors import InputError

__all__ = ["add_options", "parse_topologies"]

DEFAULT_TIMEOUT_S = 900.0  # one launch, torchrun start-up included; a hang fails after this


def parse_topologies(value: str) -> list[str]:
    """--topology comma list -> canonical topology names; unknown names list the presets."""
    from plugin.distributed.topology import parse_topology, split_topology_list

    items = split_topology_list(value)
    if not items:
        raise argparse.ArgumentTypeError("--topology needs at least one value")
    try:
        names = [parse_topology(item).name for item in items]
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return list(dict.fromkeys(names))


parse_topologies.__name__ = "--topology"  # argparse names the type in its message


def _positive(flag: str, kind: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(value: str) -> Any:
        try:
            v = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} expects a {kind.__name__}, got {value!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"{flag} must be > 0, got {value}")
        return v

    parse.__name__ = flag
    return parse


def add_options(group: Any) -> None:
    group.addoption("--topology", type=parse_topologies, default=None,
                    help="comma list -> one distributed benchmark per topology: default, pcie "
                         "(NCCL_P2P_DISABLE=1), no-rdma (NCCL_IB_DISABLE=1), socket (TCP only), ring, tree "
                         "(NCCL_ALGO), or env:KEY=VAL,... with NCCL_* settings (default: default). "
                         "NCCL-only settings skip on CPU (gloo)")
    group.addoption("--nproc", type=_positive("--nproc", int), default=None,
                    help="ranks per node for the distributed benchmarks (default: the GPU count, 2 on CPU)")
    group.addoption("--ddp-bucket-mb", type=_positive("--ddp-bucket-mb", float), default=25.0,
                    help="DistributedDataParallel gradient bucket size in MB (torch default 25)")
    group.addoption("--dist-timeout", type=_positive("--dist-timeout", float), default=DEFAULT_TIMEOUT_S,
                    help=f"seconds one torchrun launch may take before it is killed and fails "
                         f"(default {DEFAULT_TIMEOUT_S:g})")
