"""The results file: one JSON document per pytest session.

    {"schema": "trainbench-results/1", "environment": {...}, "records": [Record, ...]}

Written atomically; read back with errors that name the file and say what is wrong.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from .atomic import atomic_write_text
from ..errors import InputError
from .record import Record

__all__ = ["SCHEMA", "Results", "load_results", "write_results"]

SCHEMA = "trainbench-results/1"


@dataclass
class Results:
    environment: dict[str, Any]
    records: list[Record] = field(default_factory=list)
    path: Path | None = None  # where it was read from, for messages
    schema: str = SCHEMA

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "environment": self.environment,
            "records": [r.to_json() for r in self.records],
        }


def _clean(value: Any) -> Any:
    """JSON has no NaN/inf: write them as null so every reader can parse the file."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def write_results(path: str | Path, environment: dict[str, Any], records: Iterable[Record]) -> Path:
    doc = Results(environment, list(records)).to_json()
    return atomic_write_text(path, json.dumps(_clean(doc), indent=1, allow_nan=False) + "\n")


def load_results(path: str | Path) -> Results:
    path = Path(path)
    fix = "re-run the benchmark to produce it, or pass another results file"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"results file {path}: not found; {fix}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"results file {path}: cannot be read ({exc}); {fix}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"results file {path}: not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg}); the file is corrupt or truncated; {fix}"
        ) from None
    if not isinstance(doc, dict):
        raise InputError(f"results file {path}: expected a JSON object at the top; {fix}")
    schema = doc.get("schema")
    if schema != SCHEMA:
        raise InputError(
            f"results file {path}: schema {schema!r} is not {SCHEMA!r}, the one this version "
            f"reads; re-run the benchmark with this version of pytest-trainbench"
        )
    env, records = doc.get("environment"), doc.get("records")
    if not isinstance(env, dict) or not isinstance(records, list):
        raise InputError(f"results file {path}: 'environment' or 'records' missing or malformed; {fix}")
    out = []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or not {"test", "kind", "status", "metrics"} <= rec.keys():
            raise InputError(
                f"results file {path}: record {i} lacks test/kind/status/metrics; {fix}"
            )
        out.append(Record.from_json(rec))
    return Results(env, out, path=path, schema=schema)
