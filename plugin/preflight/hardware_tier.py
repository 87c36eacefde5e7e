"""The hardware tier end to end: NVML health items (read with the GPUs busy), P2P copies between
every pair, then the burn test and the matmul peak on every device at once.

Budget, one GPU: NVML reads and the busy loads take seconds, the peak sweep ~10-20 s for four
precisions, the burn `burn_s` (default 60 s): the tier fits in two minutes, as a boot-time gate
should.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ..harness.peak import MatmulPeak, probe_peak
from ..harness.precision import PRECISIONS, UnsupportedPrecision
from .burn import BurnConfig, BurnResult, burn, default_burn_s
from .check import Check
from .cuda_probes import busy, peer_copy
from .hardware import HardwareLimits, hardware_checks
from .hardware_facts import HardwareFacts, gather_hardware
from .stress import check_burn, check_peak, node_devices, on_every_device

__all__ = ["HardwareTier", "hardware_tier", "peak_precisions"]


@dataclass
class HardwareTier:
    facts: HardwareFacts
    checks: list[Check] = field(default_factory=list)
    burns: list[BurnResult] = field(default_factory=list)
    peaks: list[list[MatmulPeak]] = field(default_factory=list)  # per device, per precision

    def peak_environment(self) -> dict:
        """The node's measured peaks for the results file environment: the slowest device's per precision."""
        out: dict = {}
        for dev in self.peaks:
            for p in dev:
                if p.precision not in out or p.flops_per_s < out[p.precision]["flops_per_s"]:
                    out[p.precision] = p.to_json()
        return out


def peak_precisions(device: torch.device) -> list[str]:
    """Every precision this device runs: all four on Ampere+, fp32/fp16 on a T4, fp32/bf16 on a CPU
    (CPU fp16 matmuls take a slow path whose speed means nothing)."""
    out = []
    for name, prec in PRECISIONS.items():
        if device.type != "cuda" and name == "fp16":
            continue
        try:
            prec.check(device)
        except UnsupportedPrecision:
            continue
        out.append(name)
    return out


def _peaks(device: torch.device) -> list[MatmulPeak]:
    return [probe_peak(device, p) for p in peak_precisions(device)]


def hardware_tier(cfg) -> HardwareTier:
    """`cfg`: a PreflightConfig (burn_s, peak, expected_nvlinks, seed)."""
    cuda = torch.cuda.is_available()
    multi = cuda and torch.cuda.device_count() > 1
    facts = gather_hardware(busy=busy if cuda else None, copies=peer_copy if multi else None)
    tier = HardwareTier(facts, hardware_checks(facts, HardwareLimits(expected_nvlinks=cfg.expected_nvlinks)))
    devices = node_devices()
    seconds = default_burn_s(devices[0]) if cfg.burn_s is None else cfg.burn_s
    if cfg.peak:
        tier.peaks = on_every_device(_peaks, devices)
    tier.checks.append(check_peak(tier.peaks))
    if seconds > 0:
        tier.burns = on_every_device(lambda d: burn(d, BurnConfig(seconds=seconds, seed=cfg.seed)), devices)
    tier.checks.append(check_burn(tier.burns))
    return tier
