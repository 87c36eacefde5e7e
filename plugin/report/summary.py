"""`latest.md`: the session's environment, then the same per-kind tables as the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..records.atomic import atomic_write_text
from ..records.record import Record
from .session_summary import summary_lines

__all__ = ["write_summary_markdown"]


def write_summary_markdown(path: str | Path, environment: dict[str, Any], records: Sequence[Record],
                           results_path: str | Path | None = None,
                           sections: Sequence[Sequence[str]] = ()) -> Path:
    """`sections`: extra blocks of markdown lines placed before the notes (e.g. storage)."""
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
