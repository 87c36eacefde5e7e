"""Gate a pytest session against a window of baseline runs: `--trainbench-baseline PATH` (a file,
a directory of results files or a glob; repeat the option for several).

Wiring (options.py and hooks.py beside this module call these):

- `add_options(group)`: the gate options, in the "trainbench" group.
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
from ..cli.types import domain
from ..gate.files import load_series
from ..gate.step_summary import append_step_summary
from ..gate.thresholds import DEFAULT_THRESHOLDS, Threshold, parse_thresholds
from ..gate.window import DEFAULT_FALSE_ALARM, WindowComparison, check_same_environment, compare_window
from ..gate.window_markdown import flagged_table, render_window
from ..records.results import Results

__all__ = ["add_options", "configure_gate", "gate_session", "terminal_summary", "GATE_KEY", "GateOutcome"]


@dataclass
class _GateConfig:
    baselines: list[Results]
    thresholds: dict[str, Threshold | None]
    allow_env_mismatch: bool
    fail_on_suspicious: bool

    @property
    def label(self) -> str:
        first = str(self.baselines[0].path)
        return first if len(self.baselines) == 1 else f"{len(self.baselines)} baseline runs ({first} ...)"


@dataclass
class GateOutcome:
    comparison: WindowComparison | None
    error: str | None = None  # an input problem found at the end (no matching benchmark, env)
    regression: PerformanceRegression | None = None
    markdown: str = ""


_CONFIG_KEY = pytest.StashKey[_GateConfig]()
GATE_KEY = pytest.StashKey[GateOutcome]()


def add_options(group: Any) -> None:
    group.addoption(
        "--trainbench-baseline", action="append", default=None, metavar="PATH",
        help="results of earlier runs: a file, a directory of results files or a glob (repeat for "
        "more); the session fails (exit 1) when a benchmark regressed beyond its threshold and "
        "beyond the run-to-run spread measured over these runs (3+ runs needed to measure it)",
    )
    group.addoption(
        "--trainbench-fail-on-suspicious", action="store_true", default=False,
        help="fail also when a change is beyond its threshold but inside the measured noise",
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
    specs = config.getoption("--trainbench-baseline", None)
    if not specs:
        return
    try:
        baselines = load_series(specs, "--trainbench-baseline")
        check_same_environment(baselines, "--trainbench-baseline")
    except TrainbenchError as exc:
        raise pytest.UsageError(f"--trainbench-baseline: {exc}") from None
    thresholds = config.getoption("--trainbench-max-regression") or dict(DEFAULT_THRESHOLDS)
    config.stash[_CONFIG_KEY] = _GateConfig(baselines, thresholds, config.getoption("--trainbench-allow-env-mismatch"),
                                            config.getoption("--trainbench-fail-on-suspicious"))


def gate_session(session: pytest.Session, results: Results) -> GateOutcome | None:
    config = session.config
    gate = config.stash.get(_CONFIG_KEY, None)
    if gate is None or not results.records:
        return None
    try:
        comparison = compare_window(gate.baselines, results, gate.thresholds, DEFAULT_FALSE_ALARM)
    except TrainbenchError as exc:
        outcome = GateOutcome(None, error=str(exc))
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
        config.stash[GATE_KEY] = outcome
        return outcome
    title = "trainbench gate (pytest)"
    outcome = GateOutcome(comparison, markdown=render_window(comparison, title, gate.allow_env_mismatch,
                                                             gate.fail_on_suspicious))
    if comparison.env_blocking and not gate.allow_env_mismatch:
        keys = ", ".join(k for k, _ in comparison.env_blocking)
        outcome.error = (
            f"--trainbench-baseline {gate.label} comes from another environment ({keys} "
            f"differ); re-record the baseline on this machine or pass --trainbench-allow-env-mismatch"
        )
        session.exitstatus = pytest.ExitCode.USAGE_ERROR
    elif comparison.regressed or (gate.fail_on_suspicious and comparison.suspicious):
        what = f"{len(comparison.regressed)} of {len(comparison.benches)} benchmarks regressed"
        if gate.fail_on_suspicious:
            what += f", {len(comparison.suspicious)} suspicious (--trainbench-fail-on-suspicious)"
        outcome.regression = PerformanceRegression(f"{what} against {gate.label}:\n{flagged_table(comparison)}")
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
        tr.write_sep("=", f"trainbench gate: passed ({len(c.benches)} benchmarks vs {len(c.baselines)} baseline run(s))", green=True)
        for diff in c.env_blocking + c.env_other:
            tr.write_line(f"environment differs: {diff[0]}: baseline {diff[1][0]!r}, current {diff[1][1]!r}")
