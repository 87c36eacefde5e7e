"""Compiled vs eager throughput, side by side from one session: a paired ratio of runs on the
same machine in the same run (never absolute times across runs), with the compile time that
was kept out of each window."""

from __future__ import annotations

from typing import Sequence

from ..records.record import Record

__all__ = ["compile_lines"]


def _key(r: Record) -> tuple:
    return (r.workload, r.size, r.precision, r.batch_size, r.config.get("finetune", "full"))


def compile_lines(records: Sequence[Record]) -> list[str]:
    runs = [r for r in records if r.kind == "training" and r.status == "passed" and r.metrics.get("samples_per_s")]
    eager = {_key(r): r for r in runs if r.config.get("compile", "none") == "none"}
    lines = []
    for r in runs:
        base = eager.get(_key(r))
        mode = r.config.get("compile", "none")
        if mode == "none" or base is None:
            continue
        ratio = r.metrics["samples_per_s"] / base.metrics["samples_per_s"]
        w, size, precision, batch, ft = _key(r)
        lines.append(f"  {w} ({size}, {precision}, batch {batch}, {ft}): compile={mode} {ratio:.2f}x eager "
                     f"({r.metrics['samples_per_s']:.4g} vs {base.metrics['samples_per_s']:.4g} samples/s); "
                     f"compile_s {r.metrics.get('compile_s', float('nan')):.1f} s outside the window, "
                     f"{r.config.get('compile_graphs')} graph(s), {r.config.get('compile_graph_breaks')} break(s)")
    return (["torch.compile vs eager (same session, paired ratio; >1 = faster):"] + lines) if lines else []
