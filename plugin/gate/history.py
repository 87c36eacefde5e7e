"""Results over time: per benchmark and gated metric, the series of run values, the steps
ruptures finds in it (changepoints.py) and the run-to-run noise (spread.py).

Runs are ordered by start time, then commit (files.load_series). A run that lacks the
benchmark, or whose record did not pass, is a gap in that series, not a zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from ..errors import InputError
from ..records.record import Record
from ..records.results import Results
from ..report.cells import record_label
from .changepoints import Step, find_steps, run_noise
from .compare import identity
from .metrics import GatedMetric, gated_metrics
from .window import check_same_environment, metric_value

__all__ = ["MIN_HISTORY", "Series", "build_history", "describe_step"]

MIN_HISTORY = 5  # runs: fewer and a change point says little (two runs on each side of one step)


@dataclass
class Series:
    label: str  # benchmark label (record_label)
    metric: GatedMetric
    runs: list[int]  # positions of the runs that have a value, in series order
    values: list[float]
    commits: list[str]  # per value
    steps: list[Step]  # indices into `values`
    sigma: float  # robust noise of ln(value) of one run (changepoints.run_noise)

    @property
    def relative_noise(self) -> float:
        return math.exp(self.sigma) - 1.0


def describe_step(s: Series, step: Step) -> str:
    """"regressed at commit abc123 by -12% (runs 17..39)": direction by the metric's sense."""
    worse = (step.after < step.before) == s.metric.higher_is_better
    verb = "regressed" if worse else "improved"
    first, last = s.runs[step.index], s.runs[step.segment_end]
    commit = s.commits[step.index]
    same = step.index > 0 and s.commits[step.index - 1] == commit
    where = f"at commit {commit}"
    if same:
        where = f"at run {first}, commit {commit} like the run before (not a code change)"
    return f"{verb} {where} by {step.relative * 100:+.1f}% (runs {first}..{last})"


def build_history(runs: Sequence[Results], min_runs: int = MIN_HISTORY) -> list[Series]:
    if len(runs) < min_runs:
        names = ", ".join(str(r.path) for r in runs[:3])
        raise InputError(f"history needs at least {min_runs} results files, got {len(runs)} ({names}); "
                         f"point it at a directory of repeated runs")
    check_same_environment(list(runs), "history")
    order: dict[tuple, str] = {}
    by_run: list[dict[tuple, Record]] = []
    for res in runs:
        idx = {}
        for rec in res.records:
            key = identity(rec)
            order.setdefault(key, record_label(rec))
            if rec.status == "passed":
                idx.setdefault(key, rec)
        by_run.append(idx)
    out = []
    for key, label in order.items():
        for metric in gated_metrics():
            pos, vals, commits = [], [], []
            for i, (res, idx) in enumerate(zip(runs, by_run)):
                v = metric_value(idx[key], metric.key) if key in idx else None
                if v is not None and v > 0:
                    pos.append(i)
                    vals.append(v)
                    commits.append(str(res.environment.get("git_commit") or "?")[:12])
            if len(vals) < 2:
                continue
            sigma = run_noise([math.log(v) for v in vals])
            steps = find_steps(vals) if len(vals) >= min_runs else []  # too short a series: drawn, not judged
            out.append(Series(label, metric, pos, vals, commits, steps, sigma))
    return out
