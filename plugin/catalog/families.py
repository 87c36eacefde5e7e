"""GPU family of each catalog profile (`families.csv`): projections share a fitted efficiency
within a family, and borrow a named neighbour's when the published table has none of theirs."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["Family", "gpu_family"]


@dataclass(frozen=True)
class Family:
    name: str  # "ampere", "hopper", ...
    fallback: str | None  # family whose efficiency is borrowed (labelled) when this one has no data


@lru_cache(maxsize=None)
def _families() -> dict[str, Family]:
    text = resources.files(__package__).joinpath("families.csv").read_text(encoding="utf-8")
    out: dict[str, Family] = {}
    for row in csv.DictReader(line for line in text.splitlines() if not line.startswith("#")):
        if row["gpu"] in out:
            raise ValueError(f"families.csv: {row['gpu']} listed twice")
        out[row["gpu"]] = Family(row["family"], row["fallback"] or None)
    return out


def gpu_family(gpu: str) -> Family | None:
    """The family of a catalog profile; None for the CPU and unknown devices."""
    return _families().get(gpu)
