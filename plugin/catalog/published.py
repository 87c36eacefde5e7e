"""Published training throughput (`published.csv`): other people's measurements, dated and
sourced per row. Shown beside our numbers, used to fit and to check projections; never
presented as a measurement of ours."""

from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

__all__ = ["PublishedRow", "published_rows", "published_for", "published_text", "median_per_gpu"]


@dataclass(frozen=True)
class PublishedRow:
    source: str  # "lambda"
    published: str  # when the figure was published, as precise as the source says
    workload: str
    size: str  # our preset matching the published configuration
    precision: str
    gpu: str  # catalog profile
    gpu_count: int
    batch: int | None  # per GPU; None when the source does not say
    seq_len: int | None
    samples_per_s: float  # whole machine
    url: str
    note: str

    @property
    def per_gpu(self) -> float:
        return self.samples_per_s / self.gpu_count


@lru_cache(maxsize=None)
def published_rows() -> tuple[PublishedRow, ...]:
    text = resources.files(__package__).joinpath("published.csv").read_text(encoding="utf-8")
    rows = []
    for r in csv.DictReader(line for line in text.splitlines() if not line.startswith("#")):
        rows.append(PublishedRow(
            source=r["source"], published=r["published"], workload=r["workload"], size=r["size"],
            precision=r["precision"], gpu=r["gpu"], gpu_count=int(r["gpu_count"]),
            batch=int(r["batch"]) if r["batch"] else None, seq_len=int(r["seq_len"]) if r["seq_len"] else None,
            samples_per_s=float(r["samples_per_s"]), url=r["url"], note=r["note"],
        ))
    return tuple(rows)


_HALF = ("fp16", "bf16")  # same tensor-core peak on every GPU that has both


def published_for(workload: str, gpu: str, precision: str, gpu_count: int = 1) -> list[PublishedRow]:
    """Rows of this workload on this GPU and count; fp16 rows stand for bf16 and back (same peak)."""
    same = (lambda p: p in _HALF) if precision in _HALF else (lambda p: p == precision)
    return [r for r in published_rows()
            if r.workload == workload and r.gpu == gpu and r.gpu_count == gpu_count and same(r.precision)]


def published_text(rows: list[PublishedRow]) -> str | None:
    """'2,616-2,791 (lambda 2023, fp16, seq 384)' per source, '; '-joined; None without rows."""
    if not rows:
        return None
    parts = []
    for source in dict.fromkeys(r.source for r in rows):
        mine = [r for r in rows if r.source == source]
        values = sorted(r.samples_per_s for r in mine)
        span = f"{values[0]:,.0f}" if len(values) == 1 else f"{values[0]:,.0f}-{values[-1]:,.0f}"
        r = mine[0]
        seq = f", seq {r.seq_len}" if r.seq_len else ""
        parts.append(f"{span} ({r.source} {r.published}, {r.precision}{seq})")
    return "; ".join(parts)


def median_per_gpu(rows: list[PublishedRow]) -> float:
    return statistics.median(r.per_gpu for r in rows)
