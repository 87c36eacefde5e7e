"""Machine-readable report outputs: CSV (one row per benchmark per run) and JSON.

CSV writes "n/a" for missing values (pandas reads it as NaN by default); JSON writes null.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any, Sequence

from ..records.record import METRIC_KEYS
from .cells import NA
from .envdiff import environment_differences
from .merge import Row, Run, memory_kind

__all__ = ["REPORT_SCHEMA", "render_csv", "render_json"]

REPORT_SCHEMA = "trainbench-report/1"
_AXES = ("test", "kind", "workload", "size", "precision", "batch_size", "storage", "topology", "world_size", "gpu", "status")


def _metric_keys(rows: Sequence[Row]) -> list[str]:
    present: dict[str, None] = {}
    for row in rows:
        present.update(dict.fromkeys(row.record.metrics))
    return [k for k in METRIC_KEYS if k in present] + sorted(k for k in present if k not in METRIC_KEYS)


def _cell(value: Any) -> Any:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return NA
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return value


def render_csv(rows: Sequence[Row]) -> str:
    metrics = _metric_keys(rows)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["run", "file", *_AXES, "peak_mem_kind", "steps", *metrics])
    for row in rows:
        rec = row.record
        writer.writerow(
            [row.run.label, str(row.run.results.path)]
            + [_cell(getattr(rec, a)) for a in _AXES]
            + [memory_kind(rec) if "peak_mem_bytes" in rec.metrics else NA, len(rec.step_times_s)]
            + [_cell(rec.metrics.get(k)) for k in metrics]
        )
    return out.getvalue()


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def render_json(runs: Sequence[Run], rows: Sequence[Row]) -> str:
    doc = {
        "schema": REPORT_SCHEMA,
        "runs": [{"label": r.label, "file": str(r.results.path), "environment": r.environment} for r in runs],
        "environment_differences": [
            {"key": k, "values": dict(zip([r.label for r in runs], v))}
            for k, v in environment_differences({r.label: r.environment for r in runs})
        ],
        "records": [{"run": row.run.label, **row.record.to_json()} for row in rows],
    }
    return json.dumps(_finite(doc), indent=1, allow_nan=False) + "\n"
