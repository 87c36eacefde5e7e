"""The comparison tables of a report, as plain strings: one builder per table, one pivot helper.

Every cell is text already (cells.py): "n/a" for anything missing. Markdown and HTML render
the same `Table`s, so the two never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .cells import NA, format_bytes, format_metric, is_number
from ..steadiness import STEADY_RULE, steady_mark
from .envdiff import environment_differences
from .merge import Row, Run, memory_kind, value_of

__all__ = ["Table", "build_tables", "runs_table", "environment_table"]


@dataclass
class Table:
    title: str
    headers: list[str]
    rows: list[list[str]]
    note: str = ""  # one sentence under the title: what the numbers are
    anchor: str = field(default="")  # id for the HTML page


# Axis columns, in the order a reader scans them: (header, Record attribute).
_AXES = (
    ("kind", "kind"),
    ("workload", "workload"),
    ("size", "size"),
    ("precision", "precision"),
    ("batch", "batch_size"),
    ("storage", "storage"),
    ("topology", "topology"),
    ("world", "world_size"),
    ("gpu", "gpu"),
)
_MEM_COLUMNS = {"device": "peak device mem", "process RSS": "peak process RSS", "unknown": "peak mem (kind unknown)"}


def _text(value: Any) -> str:
    return NA if value is None else str(value)


def _used_axes(rows: Sequence[Row], skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Axes that are set on at least one row (a collective has no storage, a CPU run no gpu)."""
    return [(h, a) for h, a in _AXES if a not in skip and any(getattr(r.record, a) is not None for r in rows)]


def runs_table(runs: Sequence[Run]) -> Table:
    rows = []
    for run in runs:
        env = run.environment
        gpu = env.get("gpu_name") or "none (CPU)"
        if env.get("gpu_count"):
            gpu = f"{env.get('gpu_count')} x {gpu}"
        rows.append([
            run.label, str(run.results.path), _text(env.get("gpu_profile")), gpu,
            f"{_text(env.get('cpu_model'))} ({_text(env.get('cpu_count'))} cores)",
            _text(env.get("torch")), _text(env.get("cuda")), _text(env.get("driver")),
            _text(env.get("git_commit"))[:12], _text(env.get("start_time")), str(len(run.results.records)),
        ])
    headers = ["run", "file", "--gpu", "GPU", "CPU", "torch", "CUDA", "driver", "commit", "started", "records"]
    return Table("Runs", headers, rows, "one results file per run; the environment each ran in", "runs")


def environment_table(runs: Sequence[Run]) -> Table | None:
    diffs = environment_differences({r.label: r.environment for r in runs})
    if len(runs) < 2 or not diffs:
        return None
    rows = [[key] + [_text(v) for v in values] for key, values in diffs]
    return Table(
        "Environment differences", ["environment"] + [r.label for r in runs], rows,
        "entries that differ between the merged runs (start time omitted)", "env",
    )


# The metrics the per-kind tables show, with their column headers; CSV and JSON carry every key.
_SHOWN = {
    "samples_per_s": "samples/s",
    "tokens_per_s": "tokens/s",
    "step_time_median_s": "step p50",
    "step_time_p10_s": "step p10",
    "step_time_p90_s": "step p90",
    "stall_ratio": "stall ratio",
    "peak_mem_bytes": "peak mem",  # split by kind below
    "peak_mem_reserved_bytes": "peak reserved",
    "mfu": "MFU",
    "gpu_util_mean": "GPU util",
    "energy_j_per_sample": "energy/sample",
    "power_w_mean": "power",
    "cost_per_epoch_usd": "cost/epoch",
    "scaling_efficiency": "scaling eff.",
    "algbw_gbps": "algbw",
    "busbw_gbps": "busbw",
    "loss_first": "loss first",
    "loss_last": "loss last",
    "ckpt_save_s": "save",
    "ckpt_load_s": "load",
    "ckpt_bytes": "checkpoint size",
    "resume_max_abs_diff": "max |diff|",
}


def _config_text(key: str) -> Callable[[Any], str]:
    return lambda rec: _text(rec.config.get(key))


def _resume_result(rec: Any) -> str:
    if rec.config.get("bitwise_equal") is None:
        return NA
    if rec.config.get("bitwise_equal"):
        return "bitwise equal"
    diff = rec.metrics.get("resume_max_abs_diff")
    return "not bitwise" + ("" if not is_number(diff) else f" (max |diff| {diff:.2g})")


# Per kind, the columns that tell its rows apart (a collective is its op, size and dtype; a
# preflight row is its item and verdict), placed after the axes.
_KIND_COLUMNS: dict[str, list[tuple[str, Callable[[Any], str]]]] = {
    "collective": [("op", _config_text("op")),
                   ("size", lambda rec: format_bytes(rec.config["size_bytes"])
                    if is_number(rec.config.get("size_bytes")) else NA),
                   ("dtype", _config_text("dtype"))],
    "preflight": [("item", _config_text("check")), ("result", _config_text("result")),
                  ("message", lambda rec: _text(rec.message)), ("fix", _config_text("fix"))],
    "resume": [("resume result", _resume_result)],
}
_ALWAYS = ("mfu",)  # shown even when all n/a: "no MFU on this device" is a finding


def _metric_columns(rows: Sequence[Row]) -> list[str]:
    """Shown metrics that at least one row has a number for (plus _ALWAYS when present)."""
    out = []
    for key in _SHOWN:
        values = [r.record.metrics.get(key) for r in rows if key in r.record.metrics]
        if any(is_number(v) for v in values) or (values and key in _ALWAYS):
            out.append(key)
    return out


def _kind_table(kind: str, rows: Sequence[Row]) -> Table:
    axes = _used_axes(rows, skip=("kind",))
    metrics = _metric_columns(rows)
    mem_kinds = sorted({memory_kind(r.record) for r in rows if "peak_mem_bytes" in r.record.metrics})
    extra = _KIND_COLUMNS.get(kind, [])
    timed = any(r.record.step_times_s for r in rows)
    headers = ["run"] + [h for h, _ in axes] + [h for h, _ in extra] + ["status"] + (["steps", "steady"] if timed else [])
    for key in metrics:
        if key == "peak_mem_bytes":  # never device memory and process RSS in one column
            headers += [_MEM_COLUMNS[k] for k in mem_kinds]
        else:
            headers.append(_SHOWN[key])
    # a skipped, failed or OOM row says why (preflight rows carry their message already)
    why = kind != "preflight" and any(r.record.status != "passed" and r.record.message for r in rows)
    if why:
        headers.append("why not measured")
    if kind == "collective":  # grouped by op, sizes ascending within it
        rows = sorted(rows, key=lambda r: (r.run.label, str(r.record.config.get("op")),
                                           r.record.config.get("size_bytes") or 0))
    table_rows = []
    for row in rows:
        rec = row.record
        cells = ([row.run.label] + [_text(getattr(rec, a)) for _, a in axes] + [fn(rec) for _, fn in extra]
                 + [rec.status] + ([str(len(rec.step_times_s)), steady_mark(rec)] if timed else []))
        for key in metrics:
            if key == "peak_mem_bytes":
                mine = memory_kind(rec)
                cells += [format_metric(key, rec.metrics.get(key)) if k == mine else NA for k in mem_kinds]
            else:
                cells.append(format_metric(key, rec.metrics.get(key)))
        if why:
            cells.append(_text(rec.message) if rec.status != "passed" else "")
        table_rows.append(cells)
    note = "one row per benchmark per run"
    if timed:
        note += f"; {STEADY_RULE}"
    return Table(f"Benchmarks: {kind}", headers, table_rows, note, f"kind-{kind}")


def _pivot(
    title: str,
    rows: Sequence[Row],
    index: Sequence[tuple[str, Callable[[Row], Any]]],
    column: Callable[[Row], tuple[Any, str]],  # (sort key, header)
    cell: Callable[[Row], str],
    note: str,
    anchor: str,
) -> Table | None:
    if not rows:
        return None
    columns: dict[str, Any] = {}
    grid: dict[tuple, dict[str, list[str]]] = {}
    for row in rows:
        sort_key, header = column(row)
        columns.setdefault(header, sort_key)
        idx = tuple(_text(fn(row)) for _, fn in index)
        grid.setdefault(idx, {}).setdefault(header, []).append(cell(row))
    ordered = sorted(columns, key=lambda h: (str(type(columns[h])), columns[h]))
    body = [list(idx) + [", ".join(cells.get(h, [NA])) for h in ordered] for idx, cells in grid.items()]
    return Table(title, [h for h, _ in index] + ordered, body, note, anchor)


def _axis(attr: str) -> Callable[[Row], Any]:
    return lambda row: getattr(row.record, attr)


def _by_run_pivots(runs: Sequence[Run], rows: Sequence[Row]) -> list[Table]:
    """One table per metric: benchmarks down, runs across — the cross-machine comparison."""
    specs = [
        ("Throughput (samples/s)", "samples_per_s", None),
        ("Throughput (tokens/s)", "tokens_per_s", None),
        ("Median step time", "step_time_median_s", None),
        ("Stall ratio", "stall_ratio", None),
        ("MFU", "mfu", None),
        ("Cost per epoch (USD)", "cost_per_epoch_usd", None),
        ("Peak device memory", "peak_mem_bytes", "device"),
        ("Peak process RSS", "peak_mem_bytes", "process RSS"),
        ("Energy per sample", "energy_j_per_sample", None),
    ]
    order = {run.label: i for i, run in enumerate(runs)}
    out = []
    for title, key, mem in specs:
        chosen = [r for r in rows if key in r.record.metrics and (mem is None or memory_kind(r.record) == mem)]
        if not chosen or not any(is_number(r.record.metrics.get(key)) for r in chosen):
            continue
        kinds = {r.record.kind for r in chosen}  # failed/OOM runs of these benchmarks say so in their cell
        chosen += [r for r in rows if r.record.status != "passed" and r.record.kind in kinds and r not in chosen]
        table = _pivot(
            f"{title} by run", chosen,
            [(h, _axis(a)) for h, a in _used_axes(chosen, skip=("gpu",))],
            lambda r: (order[r.run.label], r.run.label),
            lambda r, key=key: format_metric(key, r.record.metrics.get(key)) if r.record.status == "passed"
            else r.record.status,
            "benchmarks down, runs across; n/a where a run lacks the benchmark or the metric",
            f"pivot-{key}-{mem or 'all'}".replace(" ", ""),
        )
        if table:
            out.append(table)
    return out


def _stall_by_storage(rows: Sequence[Row]) -> Table | None:
    chosen = [r for r in rows if is_number(r.record.metrics.get("stall_ratio")) and r.record.storage]
    index = [("run", lambda r: r.run.label)] + [(h, _axis(a)) for h, a in _used_axes(chosen, skip=("storage", "gpu"))]
    return _pivot(
        "Stall ratio by storage backend", chosen, index,
        lambda r: (r.record.storage, r.record.storage),
        lambda r: format_metric("stall_ratio", r.record.metrics["stall_ratio"]),
        "fraction of measured wall time the device waited for input", "stall",
    )


def _ddp_scaling(rows: Sequence[Row]) -> Table | None:
    chosen = [r for r in rows if r.record.kind == "ddp"]

    def cell(r: Row) -> str:
        m = r.record.metrics
        eff = format_metric("scaling_efficiency", m.get("scaling_efficiency"))
        return f"{format_metric('samples_per_s', m.get('samples_per_s'))} (eff {eff})"

    index = [("run", lambda r: r.run.label)] + [
        (h, _axis(a)) for h, a in _used_axes(chosen, skip=("kind", "world_size", "gpu"))
    ]
    return _pivot(
        "DDP scaling (samples/s, scaling efficiency)", chosen, index,
        lambda r: (r.record.world_size, f"{r.record.world_size} ranks"), cell,
        "scaling efficiency = throughput on N ranks / (N x throughput on 1 rank)", "ddp",
    )


def _collectives(rows: Sequence[Row]) -> Table | None:
    chosen = [r for r in rows if r.record.kind == "collective" and is_number(value_of(r.record, "size_bytes"))]
    index = [("run", lambda r: r.run.label), ("op", lambda r: value_of(r.record, "op"))] + [
        (h, _axis(a)) for h, a in _used_axes(chosen, skip=("kind", "workload", "size", "precision", "batch_size", "storage", "gpu"))
    ]
    return _pivot(
        "Collective bus bandwidth (busbw) by message size", chosen, index,
        lambda r: (value_of(r.record, "size_bytes"), format_bytes(value_of(r.record, "size_bytes"))),
        lambda r: format_metric("busbw_gbps", value_of(r.record, "busbw_gbps")),
        "nccl-tests definitions: busbw = algbw x 2(n-1)/n for all_reduce", "collectives",
    )


def build_tables(runs: Sequence[Run], rows: Sequence[Row]) -> list[Table]:
    tables: list[Table | None] = [runs_table(runs), environment_table(runs)]
    kinds = list(dict.fromkeys(r.record.kind for r in rows))
    tables += [_kind_table(k, [r for r in rows if r.record.kind == k]) for k in kinds]
    if len(runs) > 1:
        tables += _by_run_pivots(runs, rows)
    tables += [_stall_by_storage(rows), _ddp_scaling(rows), _collectives(rows)]
    return [t for t in tables if t is not None]
