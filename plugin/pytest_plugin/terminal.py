"""What the terminal shows during and after a session: the plan line, progress inside
benchmarks, and the summary (report/session_summary.py builds it; this module only writes).

Registered by hooks.py through `pytest_plugins`, so its hooks stay apart from the session's.
Progress and the plan line follow --trainbench-progress: `auto` writes only to a terminal,
`on` always (CI logs), `off` never. They are written with capture suspended, the way pytest's
live logging writes, so they show with -q and without -s.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from ..harness.plan import PlannedBenchmark, estimate
from ..harness.progress import Progress, Update, format_update, listening

_MODE = pytest.StashKey[str]()  # "on" or "off" once resolved from --trainbench-progress

TTY_INTERVAL_S = 1.0  # a line rewritten in place: once a second
LOG_INTERVAL_S = 2.0  # a log (not a terminal) gets a new line per update: fewer of them


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # before pytest-benchmark builds its session: its table only when asked for
    if not config.getoption("--trainbench-benchmark-table", False) and hasattr(config.option, "benchmark_quiet"):
        config.option.benchmark_quiet = True
    mode = config.getoption("--trainbench-progress", "auto")
    if mode == "auto":
        tr = config.pluginmanager.get_plugin("terminalreporter")
        mode = "on" if tr is not None and tr.isatty else "off"
    config.stash[_MODE] = mode


def _write(config: pytest.Config, line: str, *, in_place: bool = False) -> None:
    tr = config.pluginmanager.get_plugin("terminalreporter")
    capman = config.pluginmanager.get_plugin("capturemanager")
    if tr is None:
        return
    if capman is None:
        _emit(tr, line, in_place)
        return
    with capman.global_and_fixture_disabled():
        _emit(tr, line, in_place)


def _emit(tr: Any, line: str, in_place: bool) -> None:
    if not line:
        tr.write("\n")
    elif in_place:
        tr.rewrite(line, erase=True)
    else:
        tr.write_line(line)


def _planned(item: pytest.Item) -> PlannedBenchmark | None:
    if "trainbench" not in getattr(item, "fixturenames", ()):
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    return PlannedBenchmark(params.get("tb_workload"), params.get("tb_precision", "fp32"))


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def plan_line(session: Any, items: list[pytest.Item]) -> str | None:
    planned = [p for p in map(_planned, items) if p is not None]
    if not planned:
        return None
    est = estimate(planned, size=session.size, steps=session.steps, warmup=session.warmup,
                   grad_accum=session.grad_accum, batch_size=session.batch_size, spec=session.spec,
                   on_gpu=session.on_gpu)
    return (f"trainbench plan: {est.count} benchmarks on {session.profile} ({session.device}), size {session.size}, "
            f"{session.warmup}+{session.steps} steps each; estimate ~{_duration(est.seconds)} "
            f"(an estimate, not measured: {est.basis})")


def pytest_collection_finish(session: pytest.Session) -> None:
    from .hooks import SESSION_KEY

    config = session.config
    bench = config.stash.get(SESSION_KEY, None)
    if bench is None or config.stash.get(_MODE, "off") != "on":
        return
    if line := plan_line(bench, session.items):
        _write(config, line)


class _TerminalProgress:
    """Writes Updates for one test: in place on a terminal, one line each in a log."""

    def __init__(self, config: pytest.Config, tty: bool):
        self.config, self.tty = config, tty
        self.started = False

    def __call__(self, u: Update) -> None:
        line = "  " + format_update(u)
        if self.tty:
            if not self.started:
                _write(self.config, "")  # off the line pytest's dots are on
            _write(self.config, line, in_place=True)
            if u.done and u.phase == "measure":
                _write(self.config, "")
        else:
            if not self.started:
                _write(self.config, "")  # off the line pytest's dots are on
            _write(self.config, line)
        self.started = True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    config = item.config
    if config.stash.get(_MODE, "off") != "on" or "trainbench" not in getattr(item, "fixturenames", ()):
        return (yield)
    tr = config.pluginmanager.get_plugin("terminalreporter")
    tty = bool(tr is not None and tr.isatty)
    listener = Progress(_TerminalProgress(config, tty), TTY_INTERVAL_S if tty else LOG_INTERVAL_S,
                        label=item.name.removeprefix("test_"))
    with listening(listener):
        return (yield)


def write_summary(tr: Any, bench: Any) -> None:
    """The session summary (hooks.pytest_terminal_summary calls this)."""
    from ..data.report import storage_section
    from ..report.compile_ratio import compile_lines
    from ..report.session_summary import summary_lines

    tr.write_sep("=", f"trainbench: {len(bench.records)} records on {bench.profile} ({bench.device})")
    sections = [storage_section(bench.records), compile_lines(bench.records)]
    for line in summary_lines(bench.records, sections=sections):
        tr.write_line(line)
    tr.write_line(f"results: {bench.results_path}")
    tr.write_line(f"summary: {bench.report_path}")
