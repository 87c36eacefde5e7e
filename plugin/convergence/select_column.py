"""The "$ to target" column of `trainbench select`.

Steps (samples) to target depend on the algorithm -- workload, size, precision, batch -- not on
the card, so they are measured once on any machine and combined with each instance's time per
sample, measured or projected:

    $ to target = samples_to_target x ($ per epoch / epoch samples)

which is samples_to_target / samples_per_s x price per hour. The cell carries the row's own
label (measured / projected). Evaluation time is not in it: the instance figure is training
steps only. On a multi-GPU instance the per-GPU rate x GPUs assumes the same global batch
(gradient accumulation elsewhere), or steps to target would not transfer.
"""

from __future__ import annotations

import statistics
from typing import Sequence

__all__ = ["COLUMN", "add_target_column"]

COLUMN = "$ to target"


def _matching(results, group):
    recs = [r for res in results for r in res.records
            if r.kind == "convergence" and r.workload == group.workload and (r.size or "full") == group.size
            and (r.precision or "fp32") == group.precision and r.config.get("variant") is None]
    same_batch = [r for r in recs if group.batch_size is None or r.batch_size == group.batch_size]
    return recs, same_batch


def add_target_column(groups: Sequence, results: Sequence) -> None:
    """Set `group.columns[COLUMN]` (one cell per row) and a note saying what it is based on."""
    for g in groups:
        recs, same = _matching(results, g)
        reached = [r for r in same if r.metrics.get("samples_to_target")]
        if not reached:
            why = (f"n/a: no convergence record for {g.workload} ({g.size}, {g.precision})" if not recs else
                   f"n/a: convergence records are at batch {sorted({r.batch_size for r in recs})}, not {g.batch_size}"
                   if not same else "n/a: target not reached in the convergence records")
            g.columns[COLUMN] = ["n/a (see notes)"] * len(g.rows)  # the reason once, in the notes
            g.notes.append(f"$ to target: {why.removeprefix('n/a: ')} (run pytest bench/test_convergence.py)")
            continue
        samples = statistics.median(r.metrics["samples_to_target"] for r in reached)
        cells = []
        for row in g.rows:
            if row.on_demand_usd is None or not g.epoch_samples:
                cells.append("n/a")
                continue
            usd = row.on_demand_usd * samples / g.epoch_samples
            cells.append(f"{usd:.4g} ({'measured' if row.measured else 'projected'})")
        g.columns[COLUMN] = cells
        steps = statistics.median(r.metrics["steps_to_target"] for r in reached)
        g.notes.append(f"$ to target: {steps:.0f} steps = {samples:.0f} samples to loss <= floor x "
                       f"(1 + {reached[0].config.get('margin')}) measured on {reached[0].gpu} "
                       f"({len(reached)} record(s)), x each row's time per sample (measured or projected); "
                       "training steps only, on-demand price")
