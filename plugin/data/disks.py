"""Named cloud-disk tiers: the published sustained limits a throttled local directory models.

Figures are per-disk baselines/maxima from the providers' documentation (checked 2026-11).
Capacity-dependent tiers are listed at their maximum; a smaller disk gets less (the formula is
in the comment) -- use `throttle:<MB/s>,<IOPS>` for a specific size. Burst credits are not
modelled: a training epoch outlasts any burst bucket.
"""

from __future__ import annotations

from dataclasses import dataclass

from .throttle import DiskLimits
from ..registry import Registry

__all__ = ["DiskProfile", "disk_profiles", "get_disk"]

MiB, MB = 2**20, 10**6
_AWS = "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-volume-types.html"
_ALI = "https://www.alibabacloud.com/help/en/ecs/user-guide/essds"
_ALI_SSD = "https://www.alibabacloud.com/help/en/ecs/user-guide/block-storage-performance"


@dataclass(frozen=True)
class DiskProfile:
    name: str
    limits: DiskLimits
    source: str  # where the figures are published
    note: str = ""


_profiles: Registry[DiskProfile] = Registry("disk profile", flag="--storage")

for _p in (
    # gp3: 3,000 IOPS and 125 MiB/s included at any size; SSD I/O counted in units up to 256 KiB
    DiskProfile("gp3", DiskLimits(125 * MiB, 3000), _AWS, "AWS EBS gp3 baseline"),
    # st1 (throughput HDD): 40 MiB/s per TiB baseline -> 1 TiB; 500 IOPS of up to 1 MiB each
    DiskProfile("st1", DiskLimits(40 * MiB, 500, io_unit=MiB), _AWS, "AWS EBS st1 1 TiB baseline"),
    # Alibaba standard SSD: min{1800 + 30 C, 25000} IOPS, min{120 + 0.5 C, 300} MB/s (C in GiB)
    DiskProfile("cloud-ssd", DiskLimits(300 * MB, 25000), _ALI_SSD, "Alibaba standard SSD, per-disk max"),
    # ESSD PL0: min{1800 + 12 C, 10000} IOPS, min{100 + 0.25 C, 180} MB/s
    DiskProfile("essd-pl0", DiskLimits(180 * MB, 10000), _ALI, "Alibaba ESSD PL0, per-disk max"),
    # ESSD PL1: min{1800 + 50 C, 50000} IOPS, min{120 + 0.5 C, 350} MB/s
    DiskProfile("essd-pl1", DiskLimits(350 * MB, 50000), _ALI, "Alibaba ESSD PL1, per-disk max"),
    # ESSD PL2 (461 GiB and up): min{1800 + 50 C, 100000} IOPS, min{120 + 0.5 C, 750} MB/s
    DiskProfile("essd-pl2", DiskLimits(750 * MB, 100000), _ALI, "Alibaba ESSD PL2, per-disk max"),
    # ESSD PL3 (1,261 GiB and up): min{1800 + 50 C, 1000000} IOPS, min{120 + 0.5 C, 4000} MB/s
    DiskProfile("essd-pl3", DiskLimits(4000 * MB, 1_000_000), _ALI, "Alibaba ESSD PL3, per-disk max"),
):
    _profiles.register(_p.name, _p)


def disk_profiles() -> Registry[DiskProfile]:
    return _profiles


def get_disk(name: str) -> DiskProfile:
    return _profiles.get(name)
