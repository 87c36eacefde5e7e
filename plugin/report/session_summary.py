"""The session summary a person reads: one compact table per record kind, the preflight
checklist as a checklist, what was not measured and why, and a units line. The terminal (at
most `width` columns) and `latest.md` get the same blocks; only the table syntax differs.

A table holds only records that produced numbers; a column is left out when no row has a
number for it, so no row or column is "n/a" throughout.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from tabulate import tabulate

from .cells import NA, format_bytes, format_metric, is_number
from ..records.record import Record
from ..steadiness import STEADY_RULE, steady_mark

__all__ = ["summary_blocks", "summary_lines", "UNITS", "WIDTH"]

WIDTH = 120  # a terminal a person has open beside the run

UNITS = ("units: samples/s, tokens/s over the measured wall time; step times ms (median, p10-p90); "
         "stall = share of step time waiting for input; mem = peak (GPU allocated, or RSS = process RSS on "
         "CPU); MFU = model FLOPs/s / catalog peak (n/a: no peak for the device); $/epoch = catalog price "
         f"x GPUs x epoch time; busbw/algbw GB/s (nccl-tests); steady: {STEADY_RULE}")


@dataclass
class Column:
    header: str
    cell: Callable[[Record], str]
    metric: bool = True  # a metric column is dropped when no row has a number in it


def _m(key: str) -> Callable[[Record], str]:
    return lambda r: format_metric(key, r.metrics.get(key))


def _name(r: Record) -> str:
    """The test's own name with its parameters: `training[gpt-small-fp32]` (the kind is the table)."""
    name = r.test.split("::")[-1] if "::" in r.test else r.test
    return name.removeprefix("test_")


def _mem(r: Record) -> str:
    b = r.metrics.get("peak_mem_bytes")
    if not is_number(b):
        return NA
    return f"{format_bytes(b)}{' RSS' if r.config.get('peak_mem_kind') == 'process_rss' else ''}"


def _p10_p90(r: Record) -> str:
    p10, p90 = r.metrics.get("step_time_p10_s"), r.metrics.get("step_time_p90_s")
    return NA if not (is_number(p10) and is_number(p90)) else f"{p10 * 1e3:.1f}-{p90 * 1e3:.1f}"


def _ms(key: str) -> Callable[[Record], str]:
    return lambda r: NA if not is_number(r.metrics.get(key)) else f"{r.metrics[key] * 1e3:.1f}"


def _text(attr: str) -> Callable[[Record], str]:
    return lambda r: NA if getattr(r, attr) is None else str(getattr(r, attr))


def _config(key: str) -> Callable[[Record], str]:
    return lambda r: NA if r.config.get(key) is None else str(r.config.get(key))


def _resume_result(r: Record) -> str:
    if r.config.get("bitwise_equal"):
        return "bitwise equal"
    diff = r.metrics.get("resume_max_abs_diff")
    return NA if not is_number(diff) else f"max |diff| {diff:.2g}"


def _seconds(key: str) -> Callable[[Record], str]:
    return lambda r: NA if not is_number(r.metrics.get(key)) else f"{r.metrics[key]:.3f}"


_STEADY = Column("steady", steady_mark, metric=False)
_TRAINING = [
    Column("benchmark", _name, False), Column("storage", _text("storage"), False),
    Column("batch", _text("batch_size"), False), Column("samples/s", _m("samples_per_s")),
    Column("tokens/s", _m("tokens_per_s")), Column("step ms", _ms("step_time_median_s")),
    Column("p10-p90 ms", _p10_p90), Column("stall", _m("stall_ratio")), Column("mem", _mem),
    Column("MFU", _m("mfu")), Column("GPU util", _m("gpu_util_mean")), Column("$/epoch", _m("cost_per_epoch_usd")),
    _STEADY,
]
_DDP = [
    Column("benchmark", _name, False), Column("topology", _text("topology"), False),
    Column("ranks", _text("world_size"), False), Column("batch/rank", _text("batch_size"), False),
    Column("samples/s", _m("samples_per_s")), Column("scaling eff.", _m("scaling_efficiency")),
    Column("exposed comm", _m("comm_exposed_ratio")), Column("step ms", _ms("step_time_median_s")),
    Column("stall", _m("stall_ratio")), Column("$/epoch", _m("cost_per_epoch_usd")), _STEADY,
]
_RESUME = [
    Column("benchmark", _name, False), Column("result", _resume_result, False),
    Column("save s", _seconds("ckpt_save_s")), Column("load s", _seconds("ckpt_load_s")),
    Column("async block s", _seconds("ckpt_async_save_s")), Column("checkpoint", _m("ckpt_bytes")),
]
_FSDP = [
    Column("benchmark", _name, False), Column("finetune", _config("finetune"), False),
    Column("ranks", _text("world_size"), False), Column("batch/rank", _text("batch_size"), False),
    Column("samples/s", _m("samples_per_s")), Column("scaling eff.", _m("scaling_efficiency")),
    Column("exposed RS", _m("comm_exposed_ratio")), Column("state/rank", _m("state_bytes_per_rank")),
    Column("mem", _mem), Column("params vs 1 rank", _m("params_max_abs_diff_vs_1rank")), _STEADY,
]
_GENERIC = [Column("benchmark", _name, False), Column("status", _text("status"), False)]
_COLUMNS = {"training": _TRAINING, "memory": _TRAINING, "harness": _TRAINING, "ddp": _DDP, "fsdp": _FSDP,
            "resume": _RESUME}
_TITLES = {
    "training": "training", "ddp": "DDP (ranks = world size; scaling eff. = throughput N / (N x throughput 1))",
    "fsdp": "FSDP2 full shard (state/rank = this rank's shards of weights + grads + optimizer state; a DDP rank "
            "holds the 1-rank figure; exposed RS = 1 - step(no reduce-scatter) / step)",
    "resume": "checkpoint resume (killed and resumed vs uninterrupted)",
    "collective": "collectives: busbw GB/s by message size (nccl-tests; size = whole buffer)",
}


def _fit(headers: list[str], rows: list[list[str]], tablefmt: str, width: int) -> str:
    """The table, its first column shortened with "~" until every line fits `width`."""
    rows = [list(r) for r in rows]
    while True:
        text = tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)
        over = max(len(line) for line in text.splitlines()) - width
        longest = max((len(r[0]) for r in rows), default=0)
        if over <= 0 or tablefmt != "simple" or longest <= 12:
            return text
        keep = max(12, longest - over)
        rows = [[r[0] if len(r[0]) <= keep else r[0][: keep - 1] + "~", *r[1:]] for r in rows]


def _table(records: Sequence[Record], columns: Sequence[Column], tablefmt: str, width: int) -> str:
    grid = [[c.cell(r) for c in columns] for r in records]
    def shown(i: int, c: Column) -> bool:
        values = {row[i] for row in grid}
        if c.metric:
            return values != {NA}
        if c.header == "storage":  # every row on synthetic data: the column says nothing
            return not values <= {NA, "synthetic"}
        return i == 0 or values != {NA}

    keep = [i for i, c in enumerate(columns) if shown(i, c)]
    headers = [columns[i].header for i in keep]
    rows = [[row[i] for i in keep] for row in grid]
    # one test function throughout: its name goes to the header, the rows keep their parameters
    funcs = {row[0].split("[", 1)[0] for row in rows}
    if len(funcs) == 1 and all("[" in row[0] for row in rows):
        func = funcs.pop()
        headers[0] = f"{func}[...]"
        rows = [[row[0][len(func) + 1 : -1], *row[1:]] for row in rows]
    return _fit(headers, rows, tablefmt, width)


def _measured(r: Record) -> bool:
    return r.status == "passed" and any(is_number(v) for v in r.metrics.values())


def _collectives(records: Sequence[Record], tablefmt: str, width: int) -> str:
    """Rows (op, dtype, ranks, topology), message sizes across: 56 look-alike rows become a few."""
    sizes = sorted({r.config["size_bytes"] for r in records if is_number(r.config.get("size_bytes"))})
    grid: dict[tuple, dict[int, str]] = {}
    for r in records:
        key = (str(r.config.get("op")), str(r.config.get("dtype")), str(r.world_size), r.topology or NA)
        grid.setdefault(key, {})[r.config.get("size_bytes")] = format_metric("busbw_gbps", r.metrics.get("busbw_gbps")).removesuffix(" GB/s")
    rows = [[*key, *(cells.get(s, NA) for s in sizes)] for key, cells in grid.items()]
    steady = {key: all(steady_mark(r) != "UNSTEADY" for r in records
                       if (str(r.config.get("op")), str(r.config.get("dtype")), str(r.world_size), r.topology or NA) == key)
              for key in grid}
    rows = [row + ["ok" if steady[tuple(row[:4])] else "UNSTEADY"] for row in rows]
    return _fit(["op", "dtype", "ranks", "topology", *(format_bytes(s) for s in sizes), "steady"], rows, tablefmt, width)


def _checklist(records: Sequence[Record], markdown: bool, width: int) -> list[str]:
    """Problems one per line with their fix; passes and n/a as one wrapped line each."""
    by_result: dict[str, list[Record]] = {}
    for r in records:
        by_result.setdefault(str(r.config.get("result", r.status)), []).append(r)
    counts = ", ".join(f"{len(v)} {k}" for k, v in sorted(by_result.items()))
    bullet = "- " if markdown else "  "
    lines = [f"{bullet}{counts}"]
    for result in ("fail", "warn"):
        for r in by_result.get(result, []):
            item = f"{r.workload}/{r.config.get('check')}" if r.workload else str(r.config.get("check"))
            text = f"[{result.upper()}] {item}: {r.message or ''}"
            if r.config.get("fix"):
                text += f" -- fix: {r.config['fix']}"
            lines += textwrap.wrap(text, width, initial_indent=bullet, subsequent_indent=" " * (len(bullet) + 4))
    for result in ("pass", "n/a"):
        names = sorted({str(r.config.get("check")) for r in by_result.get(result, [])})
        if names:
            lines += textwrap.wrap(f"[{result}] " + ", ".join(names), width, initial_indent=bullet,
                                   subsequent_indent=" " * (len(bullet) + 4))
    return lines


def _not_measured(records: Sequence[Record], markdown: bool, width: int) -> list[str]:
    bullet = "- " if markdown else "  "
    lines = []
    for r in records:
        if r.kind == "preflight" or _measured(r):
            continue
        reason = (r.message or "no reason recorded").strip().splitlines()[0]
        lines += textwrap.wrap(f"{r.status}: {r.test.split('::')[-1]} -- {reason}", width,
                               initial_indent=bullet, subsequent_indent=" " * (len(bullet) + 4))
    return lines


def _notes(records: Sequence[Record]) -> list[str]:
    notes = []
    slow = sorted({r.precision for r in records if r.precision in ("bf16", "fp16") and _measured(r)
                   and str(r.config.get("device", "cpu")).startswith("cpu")})
    if slow:
        notes.append(f"note: {'/'.join(slow)} is often several times slower than fp32 on a CPU "
                     "(most CPUs lack fast half-precision matmul kernels and autocast adds casts): the "
                     "precision speed-up is a GPU result; compare precisions there")
    unsteady = [r for r in records if steady_mark(r) == "UNSTEADY"]
    if unsteady:
        notes.append(f"note: {len(unsteady)} record(s) UNSTEADY ({STEADY_RULE})")
    return notes


def summary_blocks(records: Sequence[Record], *, markdown: bool = False, width: int = WIDTH,
                   sections: Sequence[Sequence[str]] = ()) -> list[tuple[str | None, list[str]]]:
    """[(heading, lines)]: one block per record kind present, `sections` (lines with their own
    headings, e.g. storage; heading None), what was not measured, and the notes."""
    tablefmt = "github" if markdown else "simple"
    blocks: list[tuple[str, list[str]]] = []
    kinds = list(dict.fromkeys(r.kind for r in records))
    for kind in kinds:
        mine = [r for r in records if r.kind == kind]
        if kind == "preflight":
            blocks.append(("preflight checklist", _checklist(mine, markdown, width)))
            continue
        measured = [r for r in mine if _measured(r)]
        if kind == "input" or not measured:  # loader-alone records: the storage section shows them
            continue
        if kind == "collective":
            text = _collectives(measured, tablefmt, width)
        else:
            text = _table(measured, _COLUMNS.get(kind, _GENERIC), tablefmt, width)
        blocks.append((_TITLES.get(kind, kind), text.splitlines()))
    blocks += [(None, list(section)) for section in sections if section]
    if missing := _not_measured(records, markdown, width):
        blocks.append(("not measured (skipped, failed, out of memory)", missing))
    notes = _notes(records) + [UNITS]
    if markdown:
        blocks.append(("notes", [f"- {n}" for n in notes]))
    else:
        blocks.append(("notes", [line for n in notes for line in textwrap.wrap(n, width)]))
    return blocks


def summary_lines(records: Sequence[Record], *, markdown: bool = False, width: int = WIDTH,
                  sections: Sequence[Sequence[str]] = ()) -> list[str]:
    out: list[str] = []
    for heading, lines in summary_blocks(records, markdown=markdown, width=width, sections=sections):
        if heading is not None:
            out += [f"## {heading}", ""] if markdown else [f"--- {heading} ---"]
        out += lines + ([""] if markdown else [])
    return out
