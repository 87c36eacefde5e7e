"""The checklist as text for the terminal, and as `kind: "preflight"` records for the results
file (one record per item; the item's own verdict is kept in `config["result"]`)."""

from __future__ import annotations

import textwrap
from typing import Iterable

from .check import FAIL, NA, PASS, WARN, Check, counts
from ..records.record import Record

__all__ = ["format_checklist", "format_peaks", "check_record_fields", "to_records", "RECORD_STATUS"]

# checklist verdict -> Record.status (the results-file vocabulary); a warning still passed
RECORD_STATUS = {PASS: "passed", WARN: "passed", FAIL: "failed", NA: "skipped"}
_MARK = {PASS: "pass", WARN: "WARN", FAIL: "FAIL", NA: "n/a "}


def _line(c: Check, width: int) -> list[str]:
    head = f"  [{_MARK[c.status]}] {c.name:<16}"
    body = textwrap.wrap(c.reason, width - len(head) - 1) or [""]
    out = [head + " " + body[0]] + [" " * (len(head) + 1) + b for b in body[1:]]
    if c.fix and c.status != PASS:
        fix = textwrap.wrap("fix: " + c.fix, width - len(head) - 1)
        out += [" " * (len(head) + 1) + f for f in fix]
    return out


def format_checklist(checks: Iterable[Check], title: str = "", width: int = 110) -> str:
    checks = list(checks)
    lines = [title] if title else []
    section = None
    for c in checks:
        key = (c.group, c.workload)
        if key != section:
            section = key
            lines.append(c.group if c.workload is None else f"{c.group}: {c.workload}")
        lines.extend(_line(c, width))
    n = counts(checks)
    lines.append(f"preflight: {n[PASS]} pass, {n[WARN]} warn, {n[FAIL]} fail, {n[NA]} n/a")
    return "\n".join(lines)


def format_peaks(peaks) -> str:
    """The measured matmul peaks, one line per device and precision, with the shape sweep."""
    lines = ["measured matmul peak (seeded N(0,1) inputs; median batch per shape, best shape):"]
    for dev in peaks:
        for p in dev:
            unit, scale = ("TFLOPS", 1e12) if p.flops_per_s >= 1e12 else ("GFLOP/s", 1e9)
            sweep = ", ".join(f"{s.m}^3 {s.median_flops_per_s / scale:.3g}" for s in p.shapes)
            lines.append(f"  {p.device:<8} {p.precision:<5} {p.flops_per_s / scale:8.1f} {unit}   [{sweep}]")
    return "\n".join(lines)


def _split(metrics: dict) -> tuple[dict, dict]:
    """Numbers go to Record.metrics; anything else (names, lists of losses) to config details."""
    nums, other = {}, {}
    for k, v in metrics.items():
        (nums if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) else other)[k] = v
    return nums, other


def check_record_fields(c: Check) -> dict:
    """Record fields of one item (without `test`)."""
    nums, other = _split(c.metrics)
    config = {"check": c.name, "group": c.group, "result": c.status, "fix": c.fix or None}
    if other:
        config["details"] = other
    return dict(kind="preflight", workload=c.workload, status=RECORD_STATUS[c.status], metrics=nums,
                config=config, message=c.reason)


def to_records(checks: Iterable[Check], test_prefix: str, **common) -> list[Record]:
    """One `Record` per item, test id `<prefix>::<group>[::<workload>]::<item>`."""
    out = []
    for c in checks:
        where = c.group if c.workload is None else f"{c.group}::{c.workload}"
        fields = check_record_fields(c)
        fields.update({k: v for k, v in common.items() if v is not None})
        out.append(Record(test=f"{test_prefix}::{where}::{c.name}", **fields))
    return out
