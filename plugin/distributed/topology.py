"""Topology presets: NCCL environment settings that force a transport or an algorithm, so the
same benchmark shows what NVLink vs PCIe, RDMA vs TCP, ring vs tree cost.

Variables and meanings from the NCCL user guide, "Environment Variables":
  NCCL_P2P_DISABLE=1  no direct GPU-to-GPU transport (NVLink / PCIe P2P): traffic goes through
                      host shared memory or the network
  NCCL_SHM_DISABLE=1  no shared-memory transport between processes
  NCCL_IB_DISABLE=1   no InfiniBand / RoCE verbs: NCCL falls back to IP sockets between nodes
  NCCL_NET=Socket     (NCCL >= 2.10) use the built-in socket network, whatever plugins exist
  NCCL_ALGO=Ring|Tree force the collective algorithm

A custom topology is `env:KEY=VAL,KEY=VAL`. Presets and custom settings only change the
environment of the ranks; what NCCL really did is visible with NCCL_DEBUG=INFO in the log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InputError
from ..registry import Registry

__all__ = [
    "parse_topology_list",
    "Topology",
    "topologies",
    "get_topology",
    "topology_names",
    "parse_topology",
    "split_topology_list",
    "effective_nccl_env",
    "detect_topology",
]


@dataclass(frozen=True)
class Topology:
    name: str  # as given on --topology; recorded in Record.topology
    env: Mapping[str, str] = field(default_factory=dict)  # set in every rank's environment
    description: str = ""
    # True when every setting only means something to NCCL: on gloo (CPU) the run would be
    # identical to `default`, so it is skipped instead of recorded under a misleading name
    nccl_only: bool = True
    ops: tuple[str, ...] | None = None  # collectives the setting means anything for (None: all)
    multi_node_only: bool = False  # changes only traffic between nodes: one node measures nothing new

    def applies_to(self, backend: str) -> bool:
        return backend == "nccl" or not self.nccl_only


_REGISTRY: Registry[Topology] = Registry("topology", flag="--topology")


def _preset(name: str, description: str, nccl_only: bool = True, ops: tuple[str, ...] | None = None,
            multi_node_only: bool = False, **env: str) -> None:
    _REGISTRY.register(name, Topology(name, dict(env), description, nccl_only, ops, multi_node_only))


_preset("default", "whatever NCCL (or gloo) picks: NVLink/P2P, SHM, IB when present", nccl_only=False)
# P2P off covers NVLink and PCIe peer copies alike; NVLS (NVLink SHARP on NVSwitch machines)
# would still use NVLink, so it goes off too. What is left is "through host memory" -- the
# path a multi-GPU box without NVLink or P2P support takes.
_preset("no-p2p", "no GPU peer-to-peer (NVLink, PCIe P2P and NVLS off): through host memory",
        NCCL_P2P_DISABLE="1", NCCL_NVLS_ENABLE="0")
_preset("no-rdma", "no InfiniBand/RoCE: IP sockets between nodes", multi_node_only=True, NCCL_IB_DISABLE="1")
_preset(
    "socket",
    "TCP sockets only, even inside a node (no P2P, no SHM, no IB)",
    NCCL_P2P_DISABLE="1",
    NCCL_SHM_DISABLE="1",
    NCCL_IB_DISABLE="1",
    NCCL_NET="Socket",
)
_preset("ring", "ring algorithm forced", NCCL_ALGO="Ring")
_preset("tree", "tree algorithm forced (NCCL has a tree for all_reduce only)", ops=("all_reduce",), NCCL_ALGO="Tree")

# Keys a custom topology may set besides NCCL_*: they tune the same communication layer.
_OTHER_KEYS = ("GLOO_SOCKET_IFNAME", "TORCH_DISTRIBUTED_DEBUG", "CUDA_DEVICE_MAX_CONNECTIONS")
_KEY = re.compile(r"^(NCCL_[A-Z0-9_]+|TORCH_NCCL_[A-Z0-9_]+)$")
# Values are passed as an environment dict (never through a shell), but a value with shell
# metacharacters or spaces is almost certainly a mistake, and the records must stay copyable
# into a shell command line: letters, digits and _ . : / ^ = + @ % - only.
_VALUE = re.compile(r"^[A-Za-z0-9_.:/^=+@%-]+$")


def topologies() -> Registry[Topology]:
    return _REGISTRY


def topology_names() -> list[str]:
    return _REGISTRY.names()


def get_topology(name: str) -> Topology:
    return _REGISTRY.get(name)


def _custom(spec: str) -> Topology:
    body = spec[len("env:"):]
    fix = "write --topology=env:NCCL_ALGO=Ring,NCCL_PROTO=Simple"
    if not body.strip():
        raise InputError(f"--topology={spec}: no settings after 'env:'; {fix}")
    env: dict[str, str] = {}
    for item in body.split(","):
        key, sep, value = item.strip().partition("=")
        if not sep:
            raise InputError(f"--topology={spec}: {item!r} is not KEY=VALUE; {fix}")
        if not (_KEY.match(key) or key in _OTHER_KEYS):
            raise InputError(
                f"--topology={spec}: {key!r} is not a communication setting; allowed: NCCL_*, "
                f"TORCH_NCCL_*, {', '.join(_OTHER_KEYS)}"
            )
        if not value:
            raise InputError(f"--topology={spec}: {key} has an empty value; {fix}")
        if not _VALUE.match(value):
            raise InputError(
                f"--topology={spec}: value {value!r} of {key} has characters other than letters, "
                f"digits and _ . : / ^ = + @ % - (no spaces, quotes or shell metacharacters)"
            )
        if key in env:
            raise InputError(f"--topology={spec}: {key} is set twice")
        env[key] = value
    nccl_only = all(k.startswith(("NCCL_", "TORCH_NCCL_")) for k in env)
    name = "env:" + ",".join(f"{k}={v}" for k, v in env.items())
    return Topology(name, env, "custom settings", nccl_only)


def parse_topology(spec: str) -> Topology:
    """A preset name or `env:KEY=VAL,...`; errors list the presets and say the fix."""
    spec = spec.strip()
    if spec.startswith("env:"):
        return _custom(spec)
    if spec == "pcie":
        raise InputError("--topology=pcie is now called no-p2p (P2P off, through host memory); pass --topology=no-p2p")
    if spec not in _REGISTRY:
        raise InputError(
            f"unknown topology --topology={spec}; known: {', '.join(topology_names())}, "
            f"or env:KEY=VAL,... (NCCL_* settings)"
        )
    return _REGISTRY.get(spec)


def split_topology_list(value: str) -> list[str]:
    """Split a --topology comma list. An `env:` item takes the KEY=VAL items after it:
    `default,env:NCCL_ALGO=Ring,NCCL_PROTO=Simple,pcie` -> 3 topologies (a preset name never
    contains '=', so the split is unambiguous; a value cannot contain a comma)."""
    items: list[str] = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        if items and items[-1].startswith("env:") and "=" in part and not part.startswith("env:"):
            items[-1] += "," + part
        else:
            items.append(part)
    return items


def parse_topology_list(value: str) -> list[str]:
    """A --topology comma list -> canonical topology names, de-duplicated, order kept."""
    items = split_topology_list(value)
    if not items:
        raise InputError("--topology needs at least one value")
    return list(dict.fromkeys(parse_topology(item).name for item in items))


def effective_nccl_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The NCCL settings a rank really runs with (inherited ones included), sorted by key."""
    return {k: environ[k] for k in sorted(environ) if k.startswith(("NCCL_", "TORCH_NCCL_"))}


def _nvlink_links(pynvml: Any, index: int) -> int:
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    links = 0
    for link in range(pynvml.NVML_NVLINK_MAX_LINKS):
        try:
            if pynvml.nvmlDeviceGetNvLinkState(handle, link) == pynvml.NVML_FEATURE_ENABLED:
                links += 1
        except pynvml.NVMLError:  # NotSupported / InvalidArgument past the last link
            continue
    return links


def detect_topology() -> dict[str, Any]:
    """What this node has: GPU count, NCCL version, active NVLink links per GPU via NVML.

    NVLink counts are None when NVML or the GPUs are absent (unknown), 0 when NVML answers and
    the GPU has no active link (a PCIe-only card).
    """
    import torch

    cuda = torch.cuda.is_available()
    out: dict[str, Any] = {
        "gpu_count": torch.cuda.device_count() if cuda else 0,
        "nccl_version": None,
        "nvlink_links_per_gpu": None,
        "nvlink_links_total": None,
    }
    if cuda:
        try:
            v = torch.cuda.nccl.version()
            out["nccl_version"] = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
        except Exception:  # torch built without NCCL
            pass
        try:
            import pynvml

            pynvml.nvmlInit()
            try:
                per_gpu = [_nvlink_links(pynvml, i) for i in range(pynvml.nvmlDeviceGetCount())]
            finally:
                pynvml.nvmlShutdown()
            out["nvlink_links_per_gpu"] = per_gpu
            out["nvlink_links_total"] = sum(per_gpu)
        except Exception:  # no NVML library / driver
            pass
    return out
