"""`select.json` (one object per row, for scripts and tests) and the compact terminal ranking."""

from __future__ import annotations

import json
from typing import Sequence

from tabulate import tabulate

from .render import duration_text, fit_text
from .rows import CostRow, Group

__all__ = ["row_object", "render_json", "render_terminal"]

TERMINAL_WIDTH = 120
_INSTANCE_CHARS = 40


def row_object(g: Group, r: CostRow) -> dict:
    fits = None if r.fit is None else r.fit.fits
    return {
        "workload": g.workload, "size": g.size, "precision": g.precision, "batch_size": g.batch_size,
        "cloud": r.cloud, "region": r.region, "instance": r.instance_type, "gpu_profile": r.gpu,
        "gpu_count": r.gpu_count, "samples_per_s": r.samples_per_s, "basis": r.basis_kind,
        "basis_text": r.basis, "method": r.method or r.basis, "efficiency_kind": r.efficiency_kind,
        "bound": r.bound, "published": r.published, "epoch_hours": r.epoch_hours,
        "on_demand_usd_per_epoch": r.on_demand_usd, "spot_usd_per_epoch": r.spot_usd, "fits": fits,
        "largest_batch": None if r.fit is None else r.fit.largest_batch, "flag": r.flag or None,
    }


def render_json(groups: Sequence[Group], spot: bool) -> str:
    rows = [{**row_object(g, r), **{name: cells[i] for name, cells in g.columns.items()}}
            for g in groups for i, r in enumerate(g.rows)]  # extra columns, e.g. "$ to target"
    return json.dumps({"schema": "trainbench-select/1", "ranked_by": "spot" if spot else "on-demand",
                       "rows": rows}, indent=1)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "~"


def render_terminal(groups: Sequence[Group], spot: bool, files: Sequence[str]) -> str:
    """A compact ranking per group that fits TERMINAL_WIDTH columns; the detail is in `files`."""
    lines = []
    for g in groups:
        lines.append(f"{g.workload} ({g.size}, {g.precision}), batch {g.batch_size or 'n/a'}: "
                     f"ranked by {'expected spot' if spot else 'on-demand'} $/epoch")
        table = []
        for i, r in enumerate(g.rows, start=1):
            where = f"{r.cloud} {r.instance_type}" if r.cloud != "-" else r.instance_type
            cost = r.rank_cost(spot)
            basis = r.basis_kind if r.basis_kind != "projected" else f"projected ({r.efficiency_kind})"
            table.append([i, _short(where, _INSTANCE_CHARS), f"{r.gpu_count}x {r.gpu}",
                          "n/a" if cost is None else f"{cost:.4g}", duration_text(r.epoch_hours),
                          basis + (" *" if r.flag else ""), fit_text(r)[0]])
        lines.append(tabulate(table, headers=["#", "instance", "GPUs", "$/epoch", "time/epoch", "basis", "fits"],
                              tablefmt="simple", disable_numparse=True))
        lines.append("")
    lines.append("* flagged price or GPU spec. projected (kind) = an estimate at a measured / published / borrowed /")
    lines.append("  assumed efficiency, never a measurement. Method, published figures, spot and fit detail:")
    lines += [f"  {f}" for f in files]
    return "\n".join(_short(x, TERMINAL_WIDTH) if len(x) > TERMINAL_WIDTH else x for x in "\n".join(lines).splitlines())
