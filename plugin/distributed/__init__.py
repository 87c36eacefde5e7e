"""Distributed runs under torchrun: collective bandwidth (nccl-tests definitions), DDP scaling,
NCCL topology presets. Worker modules (`collectives`, `ddp`) run on every rank; `launch` starts
them as a torchrun subprocess; `fold` turns rank 0's result into records."""

from .bandwidth import OPS, algbw_gbps, busbw_factor, busbw_gbps
from .launch import Launch, LaunchResult, RankFailure, launch
from .scaling import comm_exposed_ratio, scaling_efficiency
from .topology import Topology, detect_topology, parse_topology, topology_names

__all__ = [
    "OPS",
    "Launch",
    "LaunchResult",
    "RankFailure",
    "Topology",
    "algbw_gbps",
    "busbw_factor",
    "busbw_gbps",
    "comm_exposed_ratio",
    "detect_topology",
    "launch",
    "parse_topology",
    "scaling_efficiency",
    "topology_names",
]
