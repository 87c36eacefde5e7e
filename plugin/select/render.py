"""The instance-selection report as markdown (tabulate) and as one self-contained HTML page."""

from __future__ import annotations

import base64
import html
from typing import Sequence

from tabulate import tabulate

from ..cost.fit import mode_advice, mode_facts, modes_cell
from .rows import CostRow, Group, SelectConfig
from .charts import group_chart_png

__all__ = ["HEADERS", "spot_model_text", "table_rows", "method_lines", "duration_text", "fit_text", "render_markdown", "render_html"]

HEADERS = ["#", "instance", "GPUs", "throughput basis", "samples/s", "published samples/s (not ours)", "time/epoch",
           "on-demand $/epoch", "spot $/epoch (expected)", "ckpt every", "fits", "max batch",
           "modes that fit (estimate)", "flag"]


def _num(x, fmt) -> str:
    return "n/a" if x is None else format(x, fmt)


def _rate(x: float | None) -> str:
    return "n/a" if x is None else (f"{x:,.0f}" if x >= 100 else f"{x:.3g}")


def duration_text(hours: float | None) -> str:
    if hours is None:
        return "n/a"
    if hours < 1 / 60:
        return f"{hours * 3600:.3g} s"
    return f"{hours * 60:.3g} min" if hours < 1 else f"{hours:.3g} h"


def fit_text(row: CostRow) -> tuple[str, str]:
    if row.fit is None or row.fit.fits is None:
        return "n/a", "n/a"
    return ("yes" if row.fit.fits else "NO"), str(row.fit.largest_batch)


def _interval(row: CostRow) -> str:
    if row.ckpt_interval_s is None or row.spot_usd is None:
        return "n/a"
    s = row.ckpt_interval_s
    return f"{s / 60:.0f} min" if s >= 60 else f"{s:.0f} s"


def table_rows(group: Group) -> list[list[str]]:
    out = []
    for i, r in enumerate(group.rows, start=1):
        fits, largest = fit_text(r)
        spot = _num(r.spot_usd, ".4g")
        if r.spot_usd is not None and r.spot_overhead is not None:
            spot += f" (+{r.spot_overhead:.0%} time)"
        where = f"{r.cloud} {r.region} {r.instance_type}" if r.cloud != "-" else r.instance_type
        out.append([i, where, f"{r.gpu_count}x {r.gpu}", r.basis, _rate(r.samples_per_s), r.published or "-",
                    duration_text(r.epoch_hours), _num(r.on_demand_usd, ".4g"), spot, _interval(r),
                    fits, largest, modes_cell(r.mode_fits), r.flag] + [cells[i - 1] for cells in group.columns.values()])
    return out


def _headers(group: Group) -> list[str]:
    return HEADERS + list(group.columns)


def _restart_text(a) -> str:
    if not a.restart_measured:
        return f"restart {a.restart_s / 60:g} min (assumed, --restart-min) + checkpoint load"
    return (f"restart {a.restart_s:.3g} s and checkpoint save {a.measured_save_s:.3g} s / load "
            f"{a.measured_load_s or 0:.3g} s {a.source} (restart: process start to first step, load included; "
            f"VM provisioning not included)")


def spot_model_text(cfg: SelectConfig) -> str:
    """What every spot figure rests on: measured restart/save times, or the labelled assumptions."""
    a = cfg.spot_assumptions
    return (f"Spot model: mean time between interruptions {a.mtbi_s / 3600:g} h (assumed, --mtbi-hours), "
            f"{_restart_text(a)}; checkpoint "
            "interval from Daly (2006), T = sqrt(2 delta M)(1 + sqrt(delta/2M)/3 + delta/18M) - delta.")


def _intro(cfg: SelectConfig, sources: Sequence[str], price_note: str) -> list[str]:
    return [
        f"Results: {', '.join(sources)}",
        f"Prices: {price_note}",
        f"Ranked by {'expected spot' if cfg.spot else 'on-demand'} cost per epoch (rows that do not fit last).",
        spot_model_text(cfg),
        "Measured rows are measurements; projected rows are estimates from the analytic step cost "
        "(FLOPs and memory bytes) at a stated efficiency, never measurements (method per GPU below each "
        "table). The published column is other people's measurement of the same GPU and configuration.",
    ]


def _pick(g: Group, key, flagged: bool) -> CostRow | None:
    ok = [r for r in g.rows
          if key(r) is not None and not (r.fit and r.fit.fits is False) and bool(r.flag) == flagged]
    return min(ok, key=key, default=None)


def _summary(g: Group) -> list[str]:
    """Best unflagged row per question; a flagged row that looks better is named, not chosen."""
    def say(r: CostRow, what) -> str:
        return f"{r.cloud} {r.instance_type} ({r.gpu_count}x {r.gpu}, {what(r)}; {r.basis})"

    questions = [
        ("Cheapest on-demand", lambda r: r.on_demand_usd, lambda r: f"${r.on_demand_usd:.4g}/epoch"),
        ("Cheapest spot (expected, interruptions included)", lambda r: r.spot_usd,
         lambda r: f"${r.spot_usd:.4g}/epoch"),
        ("Fastest", lambda r: r.epoch_hours if r.on_demand_usd is not None else None,
         lambda r: f"{duration_text(r.epoch_hours)}/epoch"),
    ]
    out = []
    for label, key, what in questions:
        best, risky = _pick(g, key, False), _pick(g, key, True)
        if best is None and risky is None:
            continue
        line = f"{label}: " + (say(best, what) if best else "no unflagged row")
        if risky is not None and (best is None or key(risky) < key(best)):
            kind = risky.flag.split(":")[0]
            line += f"; better but flagged ({kind}): {risky.cloud} {risky.instance_type}, {what(risky)}"
        out.append(line)
    return out


def _group_lines(g: Group) -> tuple[str, list[str], list[str]]:
    title = f"{g.workload} ({g.size}, {g.precision}), batch {g.batch_size or 'n/a'}"
    facts = _summary(g)
    if g.epoch_samples:
        facts.append(f"Epoch: {g.epoch_samples:,} samples ({g.epoch_source or 'workload definition'}).")
    for m in g.measurements:
        facts.append(f"Measured: {m.gpu} ({m.size}, {m.precision}, batch {m.batch_size}, "
                     f"{m.world_size} device{'s' if m.world_size > 1 else ''}): {m.samples_per_s_per_gpu:.4g} "
                     f"samples/s per device, median of {m.runs} run(s) [{m.origin}]")
    est = g.memory
    if est is not None and est.state_bytes is not None and g.batch_size:
        facts.append(
            f"Memory estimate: weights+grads+optimizer {est.state_bytes / 1e9:.2f} GB ({est.optimizer}), "
            f"activations {est.activation_per_sample_bytes / 1e6:.1f} MB/sample "
            f"+ {est.activation_fixed_bytes / 1e6:.1f} MB = {est.total_bytes(g.batch_size) / 1e9:.2f} GB "
            f"at batch {g.batch_size}; fit keeps 10% + 0.5 GB of each card back."
        )
        for m in g.measurements:
            if m.peak_mem_bytes and m.batch_size and (m.size, m.precision) == (g.size, g.precision):
                guess = est.total_bytes(m.batch_size)
                facts.append(f"Check on {m.gpu}: estimate {guess / 1e9:.2f} GB vs measured max_memory_allocated "
                             f"{m.peak_mem_bytes / 1e9:.2f} GB at batch {m.batch_size} "
                             f"(ratio {guess / m.peak_mem_bytes:.2f}).")
    for gpu in sorted({r.gpu or "?" for r in g.searches}):
        largest = {r.config["largest_batch"] for r in g.searches if (r.gpu or "?") == gpu}
        facts.append(f"Largest batch found by trying on {gpu}: {', '.join(map(str, sorted(largest)))} (OOM search).")
    if g.modes and g.batch_size:  # issue 17: training modes, from the estimate
        facts += [f"Mode estimate, {line}" for line in mode_facts(g.modes, g.batch_size)]
    ck = g.checkpoint
    facts.append(f"Checkpoint write delta = {ck.save_s:.3g} s, load {ck.load_s:.3g} s ({ck.label}).")
    facts += g.notes
    advice, seen = [], set()
    for r in g.rows:  # issue 17: which mode fixes full fine-tuning, per GPU
        line = mode_advice(r.mode_fits, _spec(r.gpu)) if r.mode_fits else None
        if line and r.gpu not in seen:
            seen.add(r.gpu)
            advice.append(line)
    seen = set()
    for r in g.rows:
        if r.fit and r.fit.advice and r.gpu not in seen:
            seen.add(r.gpu)
            advice.append(f"{r.gpu} (batch {r.fit.batch} needs {r.fit.needed_bytes / 1e9:.1f} GB of "
                          f"{r.fit.usable_bytes / 1e9:.1f} GB usable): " + "; ".join(r.fit.advice))
    return title, facts, advice


def method_lines(g: Group) -> list[str]:
    """One line per GPU profile and count: how its projected throughput was made."""
    seen, out = set(), []
    for r in g.rows:
        if r.method and (r.gpu, r.gpu_count) not in seen:
            seen.add((r.gpu, r.gpu_count))
            out.append(f"{r.gpu_count}x {r.gpu}: {r.basis} -- {r.method}")
    return out


def _spec(gpu: str):
    from ..catalog.gpus import gpu_catalog

    return gpu_catalog().get(gpu)


def _flag_notes(groups: Sequence[Group]) -> list[str]:
    notes = {}
    for g in groups:
        for r in g.rows:
            if r.flag:
                notes[(r.cloud, r.instance_type)] = f"{r.cloud} {r.instance_type}: {r.flag} (source: {r.price_source})"
    return list(notes.values())


def render_markdown(groups: Sequence[Group], cfg: SelectConfig, sources: Sequence[str], price_note: str) -> str:
    lines = ["# Instance selection", ""] + [f"- {x}" for x in _intro(cfg, sources, price_note)] + [""]
    for g in groups:
        title, facts, advice = _group_lines(g)
        lines += [f"## {title}", ""] + [f"- {f}" for f in facts] + [""]
        lines += [tabulate(table_rows(g), headers=_headers(g), tablefmt="github", disable_numparse=True), ""]
        if advice:
            lines += ["What to change where it does not fit:", ""] + [f"- {a}" for a in advice] + [""]
        methods = method_lines(g)
        if methods:
            lines += ["How the projected rows were made:", ""] + [f"- {m}" for m in methods] + [""]
    flags = _flag_notes(groups)
    if flags:
        lines += ["## Flagged price rows", "",
                  "Shown in the tables with their flag; check them before relying on them.", ""]
        lines += [f"- {f}" for f in flags] + [""]
    return "\n".join(lines)


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}
th{background:#f0f0f0}img{max-width:100%}li{margin:2px 0}"""


def render_html(groups: Sequence[Group], cfg: SelectConfig, sources: Sequence[str], price_note: str) -> str:
    e = html.escape
    intro = "".join(f"<li>{e(x)}</li>" for x in _intro(cfg, sources, price_note))
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>Instance selection</title>"
             f"<style>{_CSS}</style></head><body>", f"<h1>Instance selection</h1><ul>{intro}</ul>"]
    for g in groups:
        title, facts, advice = _group_lines(g)
        parts.append(f"<h2>{e(title)}</h2><ul>" + "".join(f"<li>{e(f)}</li>" for f in facts) + "</ul>")
        png = group_chart_png(g, cfg.spot)
        if png:
            data = base64.b64encode(png).decode()
            parts.append(f"<img alt='cost and time per epoch per GPU' src='data:image/png;base64,{data}'>")
        parts.append(tabulate(table_rows(g), headers=_headers(g), tablefmt="html", disable_numparse=True))
        if advice:
            items = "".join(f"<li>{e(a)}</li>" for a in advice)
            parts.append(f"<p>What to change where it does not fit:</p><ul>{items}</ul>")
        methods = method_lines(g)
        if methods:
            items = "".join(f"<li>{e(m)}</li>" for m in methods)
            parts.append(f"<details><summary>How the projected rows were made</summary><ul>{items}</ul></details>")
    flags = _flag_notes(groups)
    if flags:
        parts.append("<h2>Flagged price rows</h2><ul>" + "".join(f"<li>{e(f)}</li>" for f in flags) + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)
