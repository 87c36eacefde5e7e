"""Gate a pytest session against a baseline results file: `--trainbench-baseline FILE`.

Wiring (options.py and hooks.py beside this module call these):

- `add_options(group)`: the three options, in the "trainbench" group.
- `configure_gate(config)`: at pytest_configure; reads the baseline *before* any benchmark
  runs, so a missing/corrupt/other-schema file is a usage error at once, not after an hour.
- `gate_session(session, results)`: at pytest_sessionfinish, after the results file is
  written; compares, and on a regression sets the exit status to 1 (TESTS_FAILED). A
  baseline from another environment sets 4 (USAGE_ERROR) unless
  `--trainbench-allow-env-mismatch`. The outcome waits in `config.stash` for
- `terminal_summary(terminalreporter, config)`: at pytest_terminal_summary; prints the
  `PerformanceRegression` and the table of what regressed (also to $GITHUB_STEP_SUMMARY).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from ..errors import PerformanceRegression, TrainbenchError
from ..gate.compare import DEFAULT_ALPHA, Comparison, compare_results
from ..gate.markdown import regression_table, render_comparison
from ..gate.step_summary import append_step_summary
from ..cli.types import domain
from ..gate.thresholds import DEFAULT_THRESHOLDS, Threshold, parse_thresholds
from ..records.results import Results, load_results

__all__ = ["add_options", "configure_gate", "gate_session", "terminal_summary", "GATE_KEY", "GateOutcome"]


@dataclass
class _GateConfig:
    baseline: Results
    thresholds: dict[str, Threshold | None]
    allow_env_mismatch: bool


@dataclass
class GateOutcome:
    comparison: Comparison | None
    error: str | None = None  # an input problem found at the end (no matching benchmark, env)
    regression: PerformanceRegression | None = None
    markdown: str = ""


_CONFIG_KEY = pytest.StashKey[_GateConfig]()
GATE_KEY = pytest.StashKey[GateOutcome]()


def add_options(group: Any) -> None:
    group.addoption(
        "--trainbench-baseline", default=None, metavar="FILE",
        help="results file of an earlier run; the session fails (exit 1) when a benchmark "
        "regressed against it beyond its threshold and beyond noise",
    )
    group.addoption(
        "--trainbench-max-regression", type=domain("--trainbench-max-regression", lambda s: parse_thresholds(s, "--trainbench-max-regression")),
        default=None, metavar="SPEC",
        help="allowed worsening per metric, e.g. throughput=5%%,peak_mem=10%%,stall_ratio=3pp "
        "(off disables one); defaults: " + ",".join(f"{k}={v}" for k, v in DEFAULT_THRESHOLDS.items()).replace("%", "%%"),
    )
    group.addoption(
        "--trainbench-allow-env-mismatch", action="store_true", default=False,
        help="gate even when the baseline's GPU profile/name/count, torch or CUDA differ",
    )


def configure_gate(config: pytest.Config) -> None:
    path = config.getoption("--trainbench-baseline", None)
    if not path:
        return
    try:
        baseline = load_results(path)
    except TrainbenchError as exc:
        raise pytest.UsageError(f"--trainbench-baseline: {exc}") from None
    thresholds = config.getoption("--trainbench-max-regression") or dict(DEFAULT_THRESHOLDS)
    config.stash[_CONFIG_KEY] = _GateConfig(baseline, thresholds, config.getoption("--trainbench-allow-env-mismatch"))


def gate_session(session: pytest.Session, results: Results) -> GateOutcome | None:
    config = session.config
    gate = config.stash.get(_CONFIG_KEY, None)
    if gate is None or not results.records:
        return None
    try:
        comparison = compare_results(gate.baseline, results, gate.thresholds, DEFAULT_ALPHA)
    except TrainbenchError as exc:
        outcome = GateOutcome(None, error=str(exc))
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
        config.stash[GATE_KEY] = outcome
        return outcome
    title = "trainbench gate (pytest)"
    outcome = GateOutcome(comparison, markdown=render_comparison(comparison, title, gate.allow_env_mismatch))
    if comparison.env_blocking and not gate.allow_env_mismatch:
        keys = ", ".join(k for k, _ in comparison.env_blocking)
        outcome.error = (
            f"--trainbench-baseline {gate.baseline.path} comes from another environment ({keys} "
            f"differ); re-record the baseline on this machine or pass --trainbench-allow-env-mismatch"
        )
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
    elif comparison.regressed:
        outcome.regression = PerformanceRegression(
            f"{len(comparison.regressed)} of {len(comparison.benches)} benchmarks regressed against "
            f"{gate.baseline.path}:\n{regression_table(comparison)}"
        )
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    append_step_summary(outcome.markdown)
    config.stash[GATE_KEY] = outcome
    return outcome


def terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    outcome = config.stash.get(GATE_KEY, None)
    if outcome is None:
        return
    tr = terminalreporter
    if outcome.error:
        tr.write_sep("=", "trainbench gate: error", red=True)
        if outcome.comparison is not None:
            tr.write_line(outcome.markdown)
        tr.write_line(f"ERROR: {outcome.error}", red=True)
    elif outcome.regression is not None:
        tr.write_sep("=", "trainbench gate: FAILED", red=True)
        tr.write_line(f"{type(outcome.regression).__name__}: {outcome.regression}", red=True)
    else:
        c = outcome.comparison
        tr.write_sep("=", f"trainbench gate: passed ({len(c.benches)} benchmarks vs {c.base.path})", green=True)
        for diff in c.env_blocking + c.env_other:
            tr.write_line(f"environment differs: {diff[0]}: baseline {diff[1][0]!r}, current {diff[1][1]!r}")
