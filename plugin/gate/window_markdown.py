"""A window comparison as Markdown: verdict line, the window, flagged metrics, every metric.

The spread column is what the verdict used: the run-to-run spread of the metric over the
baseline runs (relative std, or pp), pooled with the median spread of its kind where it has one
("own", "kind"), and the band a current run may move inside unflagged.
"""

from __future__ import annotations

from tabulate import tabulate

from ..report.cells import format_change, format_metric, record_label
from ..report.envdiff import EnvDiff
from .spread import MIN_RUNS
from .verdict import IMPROVEMENT, INSUFFICIENT, REGRESSION, SUSPICIOUS
from .window import NA, WindowComparison, WindowMetric

__all__ = ["render_window", "flagged_table"]

_HEADERS = ["benchmark", "metric", "baseline (median)", "current", "change", "run-to-run spread",
            "noise band", "max regression", "verdict"]
_FLAGGED = (REGRESSION, SUSPICIOUS, INSUFFICIENT)


def _pct(x: float, absolute: bool) -> str:
    return f"{x * 100:.2g}pp" if absolute else f"{x * 100:.2g}%"


def _spread_cells(m: WindowMetric) -> list[str]:
    s = m.spread
    if s is None:
        return [NA, NA]
    if s.spread is None:
        return [f"not measured ({s.runs} run{'s' if s.runs != 1 else ''}, needs {MIN_RUNS})", NA]
    pooled = f" (own ±{_pct(s.own, s.absolute)}, kind ±{_pct(s.prior, s.absolute)})" if s.prior is not None else ""
    return [f"±{_pct(s.spread, s.absolute)} over {s.runs} runs{pooled}", f"±{_pct(s.band, s.absolute)}"]


def _rows(comparison: WindowComparison, verdicts: tuple[str, ...] | None) -> list[list[str]]:
    rows = []
    for bench in comparison.benches:
        label = record_label(bench.current)
        if bench.status_change and (verdicts is None or REGRESSION in verdicts):
            rows.append([label, "status", "passed", bench.current.status, bench.status_change, "", "", "", REGRESSION])
        for m in bench.metrics:
            if verdicts is not None and m.verdict not in verdicts:
                continue
            absolute = bool(m.threshold and m.threshold.absolute)
            absolute_change = None if m.current is None or m.base is None else m.current - m.base
            rows.append([
                label, m.metric.label, format_metric(m.metric.key, m.base), format_metric(m.metric.key, m.current),
                format_change(m.relative, absolute_change, absolute), *_spread_cells(m),
                str(m.threshold) if m.threshold else "off", m.verdict,
            ])
    return rows


def flagged_table(comparison: WindowComparison, verdicts: tuple[str, ...] = _FLAGGED) -> str:
    return tabulate(_rows(comparison, verdicts), _HEADERS, tablefmt="github", disable_numparse=True)


def _env_table(diffs: list[EnvDiff]) -> str:
    return tabulate([[k, str(v[0]), str(v[1])] for k, v in diffs], ["environment", "baseline", "current"],
                    tablefmt="github", disable_numparse=True)


def _count(comparison: WindowComparison, verdict: str) -> int:
    return sum(1 for b in comparison.benches for m in b.metrics if m.verdict == verdict)


def render_window(comparison: WindowComparison, title: str = "trainbench gate", allow_env_mismatch: bool = False,
                  fail_on_suspicious: bool = False) -> str:
    c = comparison
    n = len(c.benches)
    regressed, suspicious = c.regressed, c.suspicious
    if c.env_blocking and not allow_env_mismatch:
        head = f"## {title}: REFUSED — the baseline comes from a different environment"
    elif regressed or (fail_on_suspicious and suspicious):
        head = f"## {title}: FAIL — {len(regressed)} of {n} benchmarks regressed"
        if fail_on_suspicious:
            head += f", {len(suspicious)} suspicious (--fail-on-suspicious)"
    else:
        head = f"## {title}: PASS — no regression in {n} benchmarks"
    counts = ", ".join(f"{_count(c, v)} {v}" for v in (REGRESSION, SUSPICIOUS, INSUFFICIENT, IMPROVEMENT))
    out = [head, "", f"- metrics: {counts}"]
    starts = [r.environment.get("start_time") or NA for r in c.baselines]
    out.append(f"- baseline window: {len(c.baselines)} run(s), started {min(starts)} .. {max(starts)}"
               + (f" (`{c.baselines[0].path}` ...)" if len(c.baselines) > 1 else f" (`{c.baselines[0].path}`)"))
    env = c.current.environment
    out.append(f"- current: `{c.current.path}` (commit {env.get('git_commit') or NA}, started {env.get('start_time') or NA})")
    out.append(
        f"- regression = worse than its threshold AND beyond the run-to-run noise band of the window "
        f"(one-sided prediction bound; false-alarm rate {c.alpha:g} for the whole gate, shared over its "
        f"{c.family} metrics with a measured spread: {c.alpha_per_metric:.2g} each); beyond the threshold "
        f"inside the band = suspicious; fewer than {MIN_RUNS} baseline runs = insufficient data"
    )
    out.append("")
    if c.env_blocking:
        verb = "allowed by --allow-env-mismatch" if allow_env_mismatch else "refused; pass --allow-env-mismatch to compare anyway"
        out += [f"### Environment mismatch ({verb})", "", _env_table(c.env_blocking), ""]
    if c.env_other:
        out += ["### Other environment differences (shown, not blocking)", "", _env_table(c.env_other), ""]
    if any(b.status_change or any(m.verdict in _FLAGGED for m in b.metrics) for b in c.benches):
        out += ["### Flagged (regression, suspicious, insufficient data)", "", flagged_table(c), ""]
    rows = _rows(c, None)
    if rows:
        out += ["### All compared metrics", "", tabulate(rows, _HEADERS, tablefmt="github", disable_numparse=True), ""]
    unmatched = [[record_label(r), "only in current"] for r in c.only_current] + [[record_label(r), w] for r, w in c.not_compared]
    if unmatched:
        out += ["### Not compared", "", tabulate(unmatched, ["benchmark", "why"], tablefmt="github", disable_numparse=True), ""]
    out += [f"- note: {note}" for note in c.notes]
    return "\n".join(out).rstrip() + "\n"
