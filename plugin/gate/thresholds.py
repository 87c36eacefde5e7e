"""`--max-regression throughput=5%,peak_mem=10%,stall_ratio=3pp`: how much worse is allowed.

`N%` is a relative change of the metric (5% = throughput may drop to 0.95 x baseline);
`Npp` is an absolute change of a fraction in percentage points (stall ratio 0.10 -> 0.13 is
3pp): relative changes of a small fraction explode (0.01 -> 0.02 is +100%), so fractions
default to pp. `off` disables a gate. A name is a group (`throughput`) or a metric key
(`tokens_per_s`); a key's threshold wins over its group's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from ..errors import InputError
from .metrics import GatedMetric, gated_metrics, group_names

__all__ = ["Threshold", "DEFAULT_THRESHOLDS", "parse_thresholds", "threshold_for"]


@dataclass(frozen=True)
class Threshold:
    value: float  # fraction: 0.05 means 5% (relative) or 5 percentage points (absolute)
    absolute: bool = False  # True: compare the plain difference (pp), not the ratio

    def __str__(self) -> str:
        return f"{self.value * 100:g}{'pp' if self.absolute else '%'}"


# Defaults: 5% for time-derived metrics (above the run-to-run spread of a quiet GPU runner;
# raise it on shared machines), 10% for memory and energy, 5pp for fractions.
DEFAULT_THRESHOLDS: Mapping[str, Threshold | None] = {
    "throughput": Threshold(0.05),
    "step_time": Threshold(0.05),
    "mfu": Threshold(0.05),
    "cost": Threshold(0.05),
    "peak_mem": Threshold(0.10),
    "stall_ratio": Threshold(0.05, absolute=True),
    "energy": Threshold(0.10),
    "scaling": Threshold(0.05, absolute=True),
    "bandwidth": Threshold(0.05),
}

FLAG = "--max-regression"
_FORM = "NAME=N% | NAME=Npp | NAME=off, comma separated (e.g. throughput=5%,peak_mem=10%)"


def _parse_value(name: str, text: str, flag: str) -> Threshold | None:
    text = text.strip().lower()
    if text in ("off", "none"):
        return None
    for suffix, absolute in (("pp", True), ("%", False)):
        if text.endswith(suffix):
            try:
                number = float(text[: -len(suffix)])
            except ValueError:
                break
            if not math.isfinite(number) or number < 0:
                break
            return Threshold(number / 100.0, absolute)
    raise InputError(f"{flag}: {name}={text!r} is not a threshold; use {_FORM}")


def parse_thresholds(spec: str | None, flag: str = FLAG) -> dict[str, Threshold | None]:
    """Defaults overlaid with `spec`; raises InputError naming the flag and the valid names."""
    out: dict[str, Threshold | None] = dict(DEFAULT_THRESHOLDS)
    if not spec:
        return out
    keys = [m.key for m in gated_metrics()]
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise InputError(f"{flag}: {item!r} has no '='; use {_FORM}")
        if name not in group_names() and name not in keys:
            raise InputError(
                f"{flag}: unknown metric {name!r}; known: {', '.join(group_names())} "
                f"(or a metric key: {', '.join(keys)})"
            )
        out[name] = _parse_value(name, value, flag)
    return out


def threshold_for(metric: GatedMetric, thresholds: Mapping[str, Threshold | None]) -> Threshold | None:
    if metric.key in thresholds:
        return thresholds[metric.key]
    return thresholds.get(metric.group, DEFAULT_THRESHOLDS.get(metric.group))
