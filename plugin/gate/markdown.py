"""The comparison as Markdown: verdict line, environment, regressions, every compared metric.

The same text goes to stdout, to `$GITHUB_STEP_SUMMARY` and into the pytest failure.
"""

from __future__ import annotations

from tabulate import tabulate

from .compare import NA, Comparison, MetricChange
from ..report.cells import format_change, format_metric, record_label
from ..report.envdiff import EnvDiff

__all__ = ["render_comparison", "regression_table"]


def _p_cell(change: MetricChange) -> str:
    if change.test is not None:
        t = change.test
        return f"{t.p_value:.2g} ({t.n_base} vs {t.n_current} steps)"
    if change.verdict == NA:
        return NA
    return "threshold only" if change.metric.per_step is None else "threshold only (too few steps)"


def _rows(comparison: Comparison, only_regressions: bool) -> list[list[str]]:
    rows = []
    for bench in comparison.benches:
        label = record_label(bench.current)
        if bench.status_change:
            rows.append([label, "status", bench.base.status, bench.current.status, bench.status_change, "", "", "regression"])
        for m in bench.metrics:
            if only_regressions and m.verdict != "regression":
                continue
            threshold = m.threshold
            rows.append([
                label,
                m.metric.label,
                format_metric(m.metric.key, m.base),
                format_metric(m.metric.key, m.current),
                format_change(m.relative, m.absolute, bool(threshold and threshold.absolute)),
                str(threshold) if threshold else "off",
                _p_cell(m),
                m.verdict,
            ])
    return rows


_HEADERS = ["benchmark", "metric", "baseline", "current", "change", "max regression", "p (beyond threshold)", "verdict"]


def regression_table(comparison: Comparison) -> str:
    return tabulate(_rows(comparison, only_regressions=True), _HEADERS, tablefmt="github", disable_numparse=True)


def _env_table(diffs: list[EnvDiff]) -> str:
    return tabulate([[k, str(v[0]), str(v[1])] for k, v in diffs], ["environment", "baseline", "current"], tablefmt="github", disable_numparse=True)


def render_comparison(
    comparison: Comparison,
    title: str = "trainbench compare",
    allow_env_mismatch: bool = False,
    gating: bool = True,  # False for `compare`: mismatches are shown, nothing is refused
) -> str:
    regressed = comparison.regressed
    n = len(comparison.benches)
    if comparison.env_blocking and gating and not allow_env_mismatch:
        head = f"## {title}: REFUSED — the baseline comes from a different environment"
    elif regressed:
        head = f"## {title}: FAIL — {len(regressed)} of {n} benchmarks regressed"
    else:
        head = f"## {title}: PASS — no regression in {n} benchmarks"
    out = [head, ""]
    for name, res in (("baseline", comparison.base), ("current", comparison.current)):
        env = res.environment
        out.append(f"- {name}: `{res.path}` (commit {env.get('git_commit') or NA}, started {env.get('start_time') or NA})")
    out.append(
        f"- regression = worse than its threshold and, for step-time metrics, significantly so: "
        f"one-sided Mann-Whitney U test of the current step times against the baseline's "
        f"scaled to the threshold, p < {comparison.alpha:g}"
    )
    out.append("")
    if comparison.env_blocking:
        if not gating:
            verb = "shown; `trainbench gate` refuses this baseline without --allow-env-mismatch"
        elif allow_env_mismatch:
            verb = "allowed by --allow-env-mismatch"
        else:
            verb = "refused; pass --allow-env-mismatch to compare anyway"
        out += [f"### Environment mismatch ({verb})", "", _env_table(comparison.env_blocking), ""]
    if comparison.env_other:
        out += ["### Other environment differences (shown, not blocking)", "", _env_table(comparison.env_other), ""]
    if regressed:
        out += ["### Regressions", "", regression_table(comparison), ""]
    rows = _rows(comparison, only_regressions=False)
    if rows:
        out += ["### All compared metrics", "", tabulate(rows, _HEADERS, tablefmt="github", disable_numparse=True), ""]
    unmatched = (
        [[record_label(r), "only in baseline"] for r in comparison.only_base]
        + [[record_label(r), "only in current"] for r in comparison.only_current]
        + [[record_label(r), why] for r, why in comparison.not_compared]
    )
    if unmatched:
        out += ["### Not compared", "", tabulate(unmatched, ["benchmark", "why"], tablefmt="github", disable_numparse=True), ""]
    out += [f"- note: {note}" for note in comparison.notes]
    return "\n".join(out).rstrip() + "\n"
