"""The session summary: one row per record, printed in the terminal and written as markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

from tabulate import tabulate

from ..records.atomic import atomic_write_text
from ..records.record import Record
from .session_summary import summary_lines

__all__ = ["fmt", "summary_rows", "summary_table", "write_summary_markdown"]

_HEADERS = ["test", "status", "workload", "size", "prec", "batch", "storage", "samples/s",
            "step p50 ms", "p10-p90 ms", "stall", "peak mem", "MFU", "loss first→last"]


def fmt(value: Any, spec: str = ".3g", scale: float = 1.0, unit: str = "") -> str:
    """n/a for a missing number, never 0."""
    if value is None:
        return "n/a"
    return f"{value * scale:{spec}}{unit}"


def _mem(rec: Record) -> str:
    b = rec.metrics.get("peak_mem_bytes")
    if b is None:
        return "n/a"
    kind = "RSS" if rec.config.get("peak_mem_kind") == "process_rss" else "GPU"
    return f"{b / 2**30:.2f} GiB {kind}"


def summary_rows(records: Iterable[Record]) -> list[list[str]]:
    rows = []
    for r in records:
        m = r.metrics
        p10, p90 = m.get("step_time_p10_s"), m.get("step_time_p90_s")
        rows.append([
            r.test.split("::")[-1],
            r.status,
            r.workload or "",
            r.size or "",
            r.precision or "",
            r.batch_size if r.batch_size is not None else "",
            r.storage or "",
            fmt(m.get("samples_per_s"), ".1f"),
            fmt(m.get("step_time_median_s"), ".1f", 1e3),
            "n/a" if p10 is None or p90 is None else f"{p10 * 1e3:.1f}-{p90 * 1e3:.1f}",
            fmt(m.get("stall_ratio"), ".1%"),
            _mem(r),
            fmt(m.get("mfu"), ".1%"),
            "n/a" if m.get("loss_first") is None else f"{m['loss_first']:.3f}→{m['loss_last']:.3f}",
        ])
    return rows


def summary_table(records: Sequence[Record], tablefmt: str = "simple") -> str:
    return tabulate(summary_rows(records), headers=_HEADERS, tablefmt=tablefmt, disable_numparse=True)


def write_summary_markdown(path: str | Path, environment: dict[str, Any], records: Sequence[Record],
                           results_path: str | Path | None = None,
                           sections: Sequence[Sequence[str]] = ()) -> Path:
    """`sections`: extra blocks of markdown lines appended after the table (e.g. storage)."""
    env = environment
    device = env.get("gpu_name") or f"CPU: {env.get('cpu_model')} ({env.get('cpu_count')} cores)"
    lines = [
        "# pytest-trainbench: latest run",
        "",
        f"- started: {env.get('start_time')} on `{env.get('host')}`",
        f"- device: {device}; --gpu profile: {env.get('gpu_profile')}",
        f"- torch {env.get('torch')}, CUDA {env.get('cuda') or 'n/a'}, driver {env.get('driver') or 'n/a'}",
        f"- results file: `{results_path}`" if results_path else "",
        "",
        "Measured: throughput = samples / wall time (device synced at both ends); step times are",
        "median and p10-p90 of the measured steps; peak memory is GPU `max_memory_allocated` or",
        "process RSS on CPU (labelled); MFU is n/a where the catalog has no peak for the device.",
        "The same tables as the terminal summary:",
        "",
        *summary_lines(records, markdown=True, sections=sections),
    ]
    return atomic_write_text(path, "\n".join(lines))
