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
    label: str  # short unique name: the file stem, or parent/stem when stems repeat
    results: Results

    @property
    def environment(self) -> dict[str, Any]:
        return self.results.environment


@dataclass
class Row:
    run: Run
    record: Record


def _labels(paths: list[Path]) -> list[str]:
    labels = [p.stem for p in paths]
    if len(set(labels)) < len(labels):
        labels = [f"{p.parent.name}/{p.stem}" if p.parent.name else p.stem for p in paths]
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
    runs = [Run(label, load_results(p)) for label, p in zip(_labels(paths), paths)]
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
