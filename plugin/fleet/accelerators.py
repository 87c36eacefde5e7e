"""Catalog GPU profile -> the accelerator name SkyPilot's catalog uses for it.

SkyPilot names the part, not the variant we profile: the 40 GB A100 is `A100`, the 80 GB one
`A100-80GB` (SXM and PCIe alike), the V100 16 GB parts are both `V100`. A profile missing here
cannot be requested from SkyPilot (the CPU profile, parts SkyPilot has no name for).
"""

from __future__ import annotations

from ..errors import InputError

__all__ = ["SKY_ACCELERATORS", "sky_accelerator"]

SKY_ACCELERATORS = {
    "t4": "T4",
    "l4": "L4",
    "a10g": "A10G",  # AWS g5
    "a10": "A10",  # Azure NVadsA10 v5
    "v100": "V100",
    "v100-pcie": "V100",
    "v100-32g": "V100-32GB",
    "a100-40g": "A100",
    "a100-80g": "A100-80GB",
    "a100-80g-pcie": "A100-80GB",
    "h100": "H100",
    "h100-nvl": "H100-NVL",  # Azure NC H100 v5
    "h200": "H200",
    "l20": "L20",
}


def sky_accelerator(gpu: str, flag: str = "--gpus") -> str:
    try:
        return SKY_ACCELERATORS[gpu]
    except KeyError:
        raise InputError(
            f"{flag}={gpu}: SkyPilot has no accelerator name for this profile; "
            f"choose from {', '.join(SKY_ACCELERATORS)}"
        ) from None
