"""Bar charts of cost and time per epoch per GPU, as PNG bytes (embedded in the HTML page).

One bar per GPU profile: its cheapest priced instance for cost, one GPU for time. Projected
bars are hatched and say so in the legend; measured bars are solid. A GPU that cannot be
projected is drawn last with no bar and its reason written in.
"""

from __future__ import annotations

import io

from .rows import Group

__all__ = ["group_chart_png"]


def _per_gpu(group: Group, spot: bool):
    best, unknown = {}, {}
    for row in group.rows:
        if row.samples_per_s is None:
            unknown.setdefault(row.gpu, row)  # cannot be projected: drawn empty and labelled why
            continue
        cost = row.rank_cost(spot)
        cur = best.get(row.gpu)
        if cur is None or (cost is not None and (cur.rank_cost(spot) is None or cost < cur.rank_cost(spot))):
            best[row.gpu] = row
    ranked = sorted(best.values(), key=lambda r: (r.rank_cost(spot) is None, r.rank_cost(spot) or 0.0))
    return ranked + [r for gpu, r in unknown.items() if gpu not in best]


def group_chart_png(group: Group, spot: bool = False) -> bytes | None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.patches import Patch

    rows = _per_gpu(group, spot)
    if not rows or group.epoch_samples is None:
        return None
    names = [f"{r.gpu} *" if r.flag else r.gpu for r in rows]  # * = the price row is flagged
    cost = [r.rank_cost(spot) or 0.0 for r in rows]
    hours = [group.epoch_samples / (r.samples_per_s / r.gpu_count) / 3600 if r.samples_per_s else 0.0 for r in rows]
    hatch = [None if r.measured else "//" for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 0.45 * len(rows) + 1.8), dpi=90)
    for ax, values, title in (
        (ax1, cost, f"{'expected spot' if spot else 'on-demand'} USD per epoch (cheapest instance)"),
        (ax2, hours, "hours per epoch on one GPU"),
    ):
        bars = ax.barh(names, values, color=["#2c7fb8" if r.measured else "#a6bddb" for r in rows])
        for bar, h in zip(bars, hatch):
            bar.set_hatch(h)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    for i, r in enumerate(rows):
        if r.samples_per_s is None:
            for ax in (ax1, ax2):
                ax.annotate(f" {r.basis[:60]}", (0, i), va="center", fontsize=8)
        elif r.rank_cost(spot) is None:
            ax1.annotate(" n/a", (0, i), va="center", fontsize=8)
    legend = [Patch(color="#2c7fb8", label="measured"), Patch(facecolor="#a6bddb", hatch="//", label="projected")]
    ax2.legend(handles=legend, loc="lower right", fontsize=8)
    title = f"{group.workload} ({group.size}, {group.precision})"
    if any(r.flag for r in rows):
        title += "   * flagged price row or GPU spec: see the table"
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
