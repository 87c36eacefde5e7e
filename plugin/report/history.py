"""The history report: a table of detected steps and noise per metric, and one chart per
benchmark and metric -- the runs' values, the segment medians between detected steps, and the
noise band (segment median x exp(+-2 sigma), sigma the robust run-to-run noise of ln value).

Writes `history.md` (charts as PNG files beside it) and `history.html` (self-contained).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Sequence

from tabulate import tabulate

from ..gate.history import Series, describe_step
from ..records.atomic import atomic_write_bytes, atomic_write_text
from ..records.results import Results
from .cells import format_metric
from .charts import Chart, _figure, _png
from .html import render_html
from .tables import Table

__all__ = ["BAND_SIGMAS", "history_chart", "write_history"]

BAND_SIGMAS = 2.0  # the shaded band: ~95% of runs of an unchanged code fall inside it


def history_chart(s: Series) -> Chart:
    fig, ax = _figure()
    ax.plot(s.runs, s.values, "o-", color="#4c72b0", lw=1, ms=4, label="run value")
    bounds = [0, *(st.index for st in s.steps), len(s.values)]
    for n, (a, b) in enumerate(zip(bounds, bounds[1:])):
        seg = sorted(s.values[a:b])
        med = seg[len(seg) // 2] if len(seg) % 2 else (seg[len(seg) // 2 - 1] + seg[len(seg) // 2]) / 2
        xs = [s.runs[a] - 0.4, s.runs[b - 1] + 0.4]
        band = math.exp(BAND_SIGMAS * s.sigma)
        ax.fill_between(xs, [med / band] * 2, [med * band] * 2, color="#999", alpha=0.25, lw=0,
                        label=f"noise band (±{BAND_SIGMAS:g}σ run-to-run)" if n == 0 else None)
        ax.plot(xs, [med, med], color="#c44e52", lw=2, label="segment median" if n == 0 else None)
    for st in s.steps:
        ax.axvline(s.runs[st.index] - 0.5, color="#c44e52", ls="--", lw=1)
        low = st.after < st.before  # the runs after the step sit low: label at the top, clear of them
        ax.text(s.runs[st.index] - 0.4, 0.97 if low else 0.03, f"{st.relative * 100:+.1f}% @ {s.commits[st.index]}",
                transform=ax.get_xaxis_transform(), fontsize=8, color="#c44e52", ha="left",
                va="top" if low else "bottom",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # runs are whole numbers
    ax.set_xlabel("run (ordered by start time)")
    unit = f" ({s.metric.unit})" if s.metric.unit else ""
    ax.set_ylabel(s.metric.label + unit)
    ax.set_title(f"{s.label}: {s.metric.label}", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.grid(alpha=0.3)
    steps = "; ".join(describe_step(s, st) for st in s.steps) or "no step detected"
    caption = (f"{s.metric.label} of {s.label} over {len(s.values)} runs; run-to-run noise "
               f"±{s.relative_noise * 100:.2g}%; {steps}")
    return Chart(f"{s.label}: {s.metric.label}", _png(fig), caption)


def _rows(series: Sequence[Series]) -> list[list[str]]:
    rows = []
    for s in series:
        last = s.values[-1]
        steps = "; ".join(describe_step(s, st) for st in s.steps) or "none"
        rows.append([s.label, s.metric.label, str(len(s.values)), format_metric(s.metric.key, last),
                     f"±{s.relative_noise * 100:.2g}%", steps])
    return rows


_HEADERS = ["benchmark", "metric", "runs", "latest", "run-to-run noise (1σ)", "detected steps"]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:80]


def write_history(runs: Sequence[Results], series: Sequence[Series], out_dir: str | Path) -> tuple[Path, Path]:
    out = Path(out_dir)
    first, last = runs[0].environment, runs[-1].environment
    span = f"{len(runs)} runs, {first.get('start_time') or 'n/a'} .. {last.get('start_time') or 'n/a'}"
    note = ("Steps found by ruptures PELT on ln(value) with a penalty scaled to the measured run-to-run "
            "noise; a step needs 2+ runs on each side.")
    rows = _rows(series)
    changed = [r for r, s in zip(rows, series) if s.steps]
    charts = [history_chart(s) for s in series]
    md = [f"# trainbench history ({span})", "", note, ""]
    if changed:
        md += ["## Detected steps", "", tabulate(changed, _HEADERS, tablefmt="github", disable_numparse=True), ""]
    else:
        md += ["No step detected in any metric.", ""]
    md += ["## Every metric", "", tabulate(rows, _HEADERS, tablefmt="github", disable_numparse=True), "", "## Charts", ""]
    for i, c in enumerate(charts):
        name = f"charts/{i:03d}-{_slug(c.title)}.png"
        atomic_write_bytes(out / name, c.png)
        md += [f"![{c.caption}]({name})", ""]
    md_path = atomic_write_text(out / "history.md", "\n".join(md))
    tables = [Table("Detected steps", _HEADERS, changed, note, anchor="runs")] if changed else []
    every = "run-to-run noise: robust 1σ of ln(value) between consecutive runs" + ("" if changed else "; no step detected in any metric")
    tables.append(Table("Every metric", _HEADERS, rows, every, anchor="env"))  # both tables above the charts
    html = render_html(tables, charts, [], title=f"trainbench history ({span})")
    html_path = atomic_write_text(out / "history.html", html)
    return md_path, html_path
