"""A self-contained HTML page: the report's tables and its charts as base64 PNG, no external
files, scripts or fonts (it opens from a CI artifact as it is)."""

from __future__ import annotations

import base64
from html import escape
from typing import Sequence

from .charts import Chart
from .tables import Table

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left}
th{background:#f2f2f2}td.na{color:#999}
figure{margin:1em 0 2em}figcaption{font-size:13px;color:#555}
.note{color:#555;font-style:italic}
"""


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in t.headers)
    body = "".join(
        "<tr>" + "".join(f'<td class="na">{escape(c)}</td>' if c == "n/a" else f"<td>{escape(c)}</td>" for c in row) + "</tr>"
        for row in t.rows
    )
    note = f'<p class="note">{escape(t.note)}</p>' if t.note else ""
    anchor = f' id="{escape(t.anchor)}"' if t.anchor else ""
    return f"<h2{anchor}>{escape(t.title)}</h2>{note}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _chart(c: Chart) -> str:
    data = base64.b64encode(c.png).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{escape(c.caption)}">'
        f"<figcaption>{escape(c.caption)}</figcaption></figure>"
    )


def render_html(tables: Sequence[Table], charts: Sequence[Chart], absent_charts: Sequence[str],
                title: str = "trainbench comparison report") -> str:
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>',
        f"<style>{_CSS}</style></head><body><h1>{escape(title)}</h1>",
    ]
    parts += [_table(t) for t in tables[:2] if t.anchor in ("runs", "env")]  # who ran where, first
    if charts or absent_charts:
        parts.append("<h2>Charts</h2>")
    parts += [_chart(c) for c in charts]
    if absent_charts:
        items = "".join(f"<li>{escape(a)}</li>" for a in absent_charts)
        parts.append(f'<p class="note">Left out for lack of data:</p><ul>{items}</ul>')
    parts += [_table(t) for t in tables if t.anchor not in ("runs", "env")]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
