"""Load results files from many machines/runs into one list of rows, each labelled by run.

Every file is read and checked before anything is written (load_results raises an
InputError naming the file), so a bad input never leaves a half-written report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError
from ..records.record import Record
from ..records.results import Results, load_results

__all__ = ["Run", "Row", "load_runs", "rows_of", "value_of", "memory_kind"]


@dataclass
class Run:
    label: str  # short unique name: --gpu profile@host short-commit (+ start time when repeated)
    results: Results

    @property
    def environment(self) -> dict[str, Any]:
        return self.results.environment


@dataclass
class Row:
    run: Run
    record: Record


def _short_label(results: Results, path: Path) -> str:
    """`h100-80g@gpu-b 1a2b3c4`: the --gpu profile, host and short commit; the file stem when
    the file carries none of them."""
    env = results.environment
    parts = [f"{env.get('gpu_profile') or '?'}@{env.get('host') or '?'}"]
    if env.get("git_commit"):
        parts.append(str(env["git_commit"])[:7])
    return " ".join(parts) if env.get("gpu_profile") or env.get("host") else path.stem


def _labels(paths: list[Path], results: list[Results]) -> list[str]:
    """Short run labels; a label two runs share gets the start time (then a counter) added."""
    labels = [_short_label(r, p) for r, p in zip(results, paths)]
    counts = {label: labels.count(label) for label in labels}
    labels = [label if counts[label] == 1 else f"{label} {str(r.environment.get('start_time') or p.stem)[:16]}"
              for label, r, p in zip(labels, results, paths)]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}#{seen[label]}")
    return out


def load_runs(paths: Sequence[str | Path]) -> list[Run]:
    if not paths:
        raise InputError("no results files given; pass one or more reports/results/*.json")
    paths = [Path(p) for p in paths]
    loaded = [load_results(p) for p in paths]
    runs = [Run(label, res) for label, res in zip(_labels(paths, loaded), loaded)]
    if not any(run.results.records for run in runs):
        names = ", ".join(str(p) for p in paths)
        raise InputError(f"results files {names}: no benchmark records in any of them; run pytest bench/ first")
    return runs


def rows_of(runs: Sequence[Run]) -> list[Row]:
    return [Row(run, rec) for run in runs for rec in run.results.records]


def value_of(record: Record, name: str) -> Any:
    """A metric, else a config entry, else an axis field (collectives keep op/size in config)."""
    if name in record.metrics:
        return record.metrics[name]
    if name in record.config:
        return record.config[name]
    return getattr(record, name, None)


def memory_kind(record: Record) -> str:
    """'device' (CUDA max_memory_allocated), 'process RSS' (CPU runs) or 'unknown'."""
    kind = record.config.get("peak_mem_kind")
    if kind == "process_rss":
        return "process RSS"
    if kind and str(kind).startswith("cuda"):
        return "device"
    return "unknown"
