"""Charts of a report as PNG bytes (matplotlib, Agg, no pyplot global state).

One builder per chart; each returns None when its data is absent (no DDP records, no
collectives...), and the page says which charts were left out and why. A bar that has no
value is drawn as the text "n/a" on the axis, never as a zero-height bar.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Callable, Sequence

from .cells import format_bytes, is_number
from .merge import Row, value_of

__all__ = ["Chart", "build_charts"]


@dataclass
class Chart:
    title: str
    png: bytes  # a complete PNG file
    caption: str  # what is plotted, in words (also the <img> alt text)


_MARKERS = "osD^vP*Xh<>p"  # with the 10 colours: 120 distinct (colour, marker) pairs


def _style(i: int) -> dict[str, str]:
    """Series i: a colour, and past the palette's 10 colours a different marker too, so no two
    series in a legend look alike."""
    return {"color": f"C{i % 10}", "marker": _MARKERS[(i // 10 + i) % len(_MARKERS)]}


def _figure():
    from matplotlib.figure import Figure  # imported here: ~0.5 s, only reports need it

    fig = Figure(figsize=(10, 4.2), dpi=100, layout="constrained")
    return fig, fig.add_subplot()


def _legend_outside(ax, **kwargs) -> None:
    """Right of the plot area, never over the data."""
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, **kwargs)


def _byte_axis(ax) -> None:
    """Log2 x axis labelled 1 KiB, 4 MiB ... instead of 2^10, 2^22."""
    from matplotlib.ticker import FixedLocator, FuncFormatter

    lo, hi = ax.get_xlim()
    ticks = [2.0**k for k in range(0, 41, 2) if lo <= 2.0**k <= hi]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: format_bytes(x).replace(".0 ", " ")))


def _png(fig) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _grouped_bars(title: str, ylabel: str, series: dict[str, dict[str, float | None]]) -> bytes:
    from matplotlib.patches import Patch

    categories = list(dict.fromkeys(c for values in series.values() for c in values))
    fig, ax = _figure()
    width = 0.8 / max(len(series), 1)
    hatches = ["", "//", "..", "xx", "\\\\", "oo", "--", "++"]  # past 10 series: colour and hatch differ

    def look(i: int) -> dict[str, str]:
        return {"facecolor": f"C{i % 10}", "hatch": hatches[(i // 10) % len(hatches)], "edgecolor": "black",
                "linewidth": 0.3}

    for i, (name, values) in enumerate(series.items()):
        for j, cat in enumerate(categories):
            x = j - 0.4 + width * (i + 0.5)
            v = values.get(cat)
            if is_number(v):
                ax.bar(x, v, width, **look(i))
            else:
                ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=7, rotation=90, color=f"C{i % 10}")
    _legend_outside(ax, handles=[Patch(label=n, **look(i)) for i, n in enumerate(series)])
    ax.set_xticks(range(len(categories)), categories, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def _lines(
    title: str, xlabel: str, ylabel: str, series: dict[str, list[tuple[float, float]]], logx: bool, ideal: bool
) -> bytes:
    fig, ax = _figure()
    for i, (name, points) in enumerate(series.items()):
        points = sorted(points)
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        ax.plot(xs, ys, label=name, **_style(i))
        if ideal and xs and xs[0] == 1:  # linear scaling from the 1-rank throughput
            ax.plot(xs, [ys[0] * x for x in xs], ls="--", color=f"C{i % 10}", alpha=0.5, label=f"{name} (ideal)")
    if logx:
        ax.set_xscale("log", base=2)
        _byte_axis(ax)
    else:  # world sizes: whole numbers only
        ax.set_xticks(sorted({x for points in series.values() for x, _ in points}))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    return _png(fig)


def _series_label(row: Row) -> str:
    rec, env = row.record, row.run.environment
    device = rec.gpu or env.get("gpu_name") or "CPU"
    return f"{row.run.label}: {device} {rec.precision or ''}".rstrip()


def _bench_label(row: Row) -> str:
    rec = row.record
    return "/".join(str(p) for p in (rec.workload, rec.size, f"b{rec.batch_size}" if rec.batch_size else None, rec.storage) if p)


def _bar_chart(
    rows: Sequence[Row], key: str, title: str, ylabel: str,
    category: Callable[[Row], str], series: Callable[[Row], str], scale: float = 1.0,
) -> Chart | None:
    chosen = [r for r in rows if is_number(r.record.metrics.get(key))]
    if not chosen:
        return None
    data: dict[str, dict[str, float | None]] = {}
    for row in rows:  # a row that has the key with no value places an "n/a" in its series
        if key not in row.record.metrics:
            continue
        value = row.record.metrics.get(key)
        data.setdefault(series(row), {}).setdefault(category(row), value * scale if is_number(value) else None)
    caption = f"{title}: {len(chosen)} benchmarks in {len(data)} series"
    return Chart(title, _grouped_bars(title, ylabel, data), caption)


def _throughput(rows: Sequence[Row]) -> Chart | None:
    chosen = [r for r in rows if r.record.kind == "training"]
    return _bar_chart(chosen, "samples_per_s", "Throughput per GPU and precision", "samples/s", _bench_label, _series_label)


def _cost(rows: Sequence[Row]) -> Chart | None:
    return _bar_chart(rows, "cost_per_epoch_usd", "Cost per epoch", "USD per epoch", _bench_label, _series_label)


def _stall(rows: Sequence[Row]) -> Chart | None:
    chosen = [r for r in rows if r.record.storage]
    return _bar_chart(
        chosen, "stall_ratio", "Stall ratio per storage backend", "stall ratio (% of wall time)",
        lambda r: str(r.record.storage),
        lambda r: f"{r.run.label}: {r.record.workload}/{r.record.size} {r.record.precision or ''}".rstrip(),
        scale=100.0,
    )


def _ddp(rows: Sequence[Row]) -> Chart | None:
    series: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        rec = row.record
        if rec.kind == "ddp" and is_number(rec.metrics.get("samples_per_s")):
            name = f"{row.run.label}: {rec.workload}/{rec.size} {rec.topology or ''}".rstrip()
            series.setdefault(name, []).append((rec.world_size, rec.metrics["samples_per_s"]))
    if not series:
        return None
    title = "DDP scaling"
    return Chart(title, _lines(title, "ranks", "samples/s (all ranks)", series, False, True),
                 f"{title}: throughput against world size, dashed = linear from 1 rank")


def _busbw(rows: Sequence[Row]) -> Chart | None:
    series: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        rec = row.record
        size, busbw = value_of(rec, "size_bytes"), value_of(rec, "busbw_gbps")
        if rec.kind == "collective" and is_number(size) and is_number(busbw) and size > 0:
            name = f"{row.run.label}: {value_of(rec, 'op')} x{rec.world_size} {rec.topology or ''}".rstrip()
            series.setdefault(name, []).append((size, busbw))
    if not series:
        return None
    title = "Bus bandwidth vs message size"
    return Chart(title, _lines(title, "message size (whole buffer)", "busbw (GB/s)", series, True, False),
                 f"{title}: nccl-tests busbw per collective")


# (builder, why it may be absent) — the page lists the absent ones with this reason.
CHARTS: tuple[tuple[Callable[[Sequence[Row]], Chart | None], str, str], ...] = (
    (_throughput, "Throughput per GPU and precision", "no training records with samples_per_s"),
    (_cost, "Cost per epoch", "no records with cost_per_epoch_usd"),
    (_stall, "Stall ratio per storage backend", "no records with stall_ratio and a storage backend"),
    (_ddp, "DDP scaling", "no records of kind ddp"),
    (_busbw, "Bus bandwidth vs message size", "no records of kind collective with size_bytes and busbw_gbps"),
)


def build_charts(rows: Sequence[Row]) -> tuple[list[Chart], list[str]]:
    """(charts drawn, "title: reason" for each chart left out)."""
    drawn, absent = [], []
    for builder, title, reason in CHARTS:
        chart = builder(rows)
        if chart is None:
            absent.append(f"{title}: {reason}")
        else:
            drawn.append(chart)
    return drawn, absent
