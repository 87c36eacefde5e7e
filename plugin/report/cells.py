"""How a value is written in a table cell: units, significant digits, and "n/a" for missing.

Missing (None, NaN, absent, not a number) is always "n/a", never 0.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["NA", "is_number", "format_metric", "format_bytes", "format_change", "record_label"]

NA = "n/a"

# metric key -> how to write it; keys not listed are written as plain numbers
_KIND = {
    "samples_per_s": "rate",
    "tokens_per_s": "rate",
    "step_time_median_s": "seconds",
    "step_time_p10_s": "seconds",
    "step_time_p90_s": "seconds",
    "stall_ratio": "fraction",
    "mfu": "fraction",
    "scaling_efficiency": "fraction",
    "gpu_util_mean": "percent",  # NVML reports percent already
    "peak_mem_bytes": "bytes",
    "peak_mem_reserved_bytes": "bytes",
    "cost_per_epoch_usd": "usd",
    "energy_j_per_sample": "joules",
    "power_w_mean": "watts",
    "busbw_gbps": "gbps",
    "algbw_gbps": "gbps",
    "size_bytes": "bytes",
    "ckpt_bytes": "bytes",
    "ckpt_save_s": "seconds",
    "ckpt_load_s": "seconds",
    "ckpt_async_save_s": "seconds",
    "ckpt_async_total_s": "seconds",
    "time_s": "seconds",
    "comm_exposed_ratio": "fraction",
    "stall_differential": "fraction",
    "mb_per_s": "rate",
}


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _sig(x: float, digits: int = 4) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def format_bytes(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:.0f} B"


def format_metric(key: str, value: Any) -> str:
    if not is_number(value):
        return NA
    kind = _KIND.get(key, "plain")
    # one format per unit, so a column reads down: "30.0 ms" beside "16.2 ms", never "30 ms"
    if kind == "seconds":
        return f"{value * 1e3:.1f} ms" if abs(value) < 1 else f"{value:.2f} s"
    if kind == "fraction":
        return f"{value * 100:.1f}%"
    if kind == "percent":
        return f"{value:.1f}%"
    if kind == "rate":
        return f"{value:,.1f}"
    if kind == "bytes":
        return format_bytes(value)
    if kind == "usd":
        return f"${value:,.2f}" if abs(value) >= 0.01 else f"${value:.2g}"
    if kind == "joules":
        return f"{value:,.2f} J"
    if kind == "watts":
        return f"{value:,.1f} W"
    if kind == "gbps":  # 3 significant digits: 0.0041 GB/s (1 KiB on CPU) to 2.02 GB/s in one column
        return f"{_sig(value, 3)} GB/s"
    return _sig(float(value))


def format_change(relative: float | None, absolute: float | None, points: bool) -> str:
    """+4.1% (relative) or +3.0pp (absolute change of a fraction)."""
    if points:
        return NA if not is_number(absolute) else f"{absolute * 100:+.3g}pp"
    if relative is None or not is_number(relative):
        return NA if absolute in (None, 0) else ("+inf" if absolute > 0 else "-inf")
    return f"{relative * 100:+.3g}%"


def record_label(record: Any) -> str:
    """The test id when there is one (it carries the parametrization), else the axes; plus what
    tells apart the records of one test (DDP and FSDP world size, collective op and message size)."""
    if record.test:
        label = record.test
    else:
        axes = (record.kind, record.workload, record.size, record.precision, record.storage)
        label = "/".join(str(a) for a in axes if a is not None)
    if record.kind in ("ddp", "fsdp"):  # one record per world size in one test
        label += f" x{record.world_size}"
    op, size = record.config.get("op"), record.config.get("size_bytes")
    if op is not None:
        label += f" {op}"
    if is_number(size):
        label += f" {format_bytes(size)}"
    return label
