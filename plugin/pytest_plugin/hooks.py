"""The pytest entry point (`pytest11: trainbench`): options, fixtures and hooks only; the work
lives in the harness, record and report modules."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from . import hookspec
from .distributed import trainbench_dist  # noqa: F401  (fixture)
from ..errors import TrainbenchError
from .fixture import Bench
from .gate import configure_gate, gate_session
from .gate import terminal_summary as gate_terminal_summary
from .options import add_options
from ..records.record import Record
from ..records.results import Results
from ..catalog.profile import resolve_profile
from .session import BenchSession, default_results_path

SESSION_KEY = pytest.StashKey[BenchSession]()
_HOOK_WORKLOADS = pytest.StashKey[list]()
_PRICES = pytest.StashKey[list]()  # price rows for cost_per_epoch_usd (validated at configure)

# Parametrized axes: a test that requests one of these fixtures gets one case per value.
AXES: dict[str, Callable[[pytest.Config], list[str]]] = {}


def _axis(name: str):
    def deco(fn):
        AXES[name] = fn
        return fn

    return deco


@_axis("tb_workload")
def _workloads(config: pytest.Config) -> list[str]:
    from ..workloads import workload_names

    return config.getoption("--workload") or workload_names()


@_axis("tb_precision")
def _precisions(config: pytest.Config) -> list[str]:
    return config.getoption("--precision") or ["fp32"]


@_axis("tb_topology")
def _topologies(config: pytest.Config) -> list[str]:
    return config.getoption("--topology") or ["default"]


@_axis("tb_storage")
def _storages(config: pytest.Config) -> list[str]:
    return config.getoption("--storage") or ["local"]


@_axis("tb_workers")
def _workers(config: pytest.Config) -> list[int]:
    on_gpu = config.stash[SESSION_KEY].on_gpu if SESSION_KEY in config.stash else False
    return config.getoption("--num-workers") or ([0, 2, 4, 8] if on_gpu else [1])


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspec)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "trainbench: a pytest-trainbench benchmark")
    config.addinivalue_line("markers", "preflight: single-card pipeline validation checks")
    # torchdata 0.11 calls a deprecated torch API on every loader construction: noise, not news
    config.addinivalue_line("filterwarnings", "ignore:'set_vital' is deprecated:UserWarning")
    try:
        profile, spec, device = resolve_profile(config.getoption("--gpu"))
        from ..workloads import register_workload, workloads

        registered: list[str] = []

        def register(workload):
            registered.append(register_workload(workload).name)
            return workload

        config.hook.pytest_trainbench_register_workloads(register=register)
        config.stash[_HOOK_WORKLOADS] = registered
        for name in config.getoption("--workload") or []:
            workloads().get(name)  # unknown name -> error listing the known ones
        from .options import prices_for

        config.stash[_PRICES] = prices_for(config)  # a bad $TRAINBENCH_PRICES file is refused here
    except TrainbenchError as exc:
        raise pytest.UsageError(str(exc)) from None
    on_gpu = device.type == "cuda"
    results = config.getoption("--trainbench-results")
    from .options import time_floors

    min_warmup_s, min_window_s = time_floors(config, on_gpu)
    session = BenchSession(
        profile=profile,
        spec=spec,
        device=device,
        size=config.getoption("--size") or ("full" if on_gpu else "tiny"),
        steps=config.getoption("--steps") or (50 if on_gpu else 10),
        warmup=config.getoption("--warmup") if config.getoption("--warmup") is not None else (10 if on_gpu else 3),
        min_warmup_s=min_warmup_s,
        min_window_s=min_window_s,
        grad_accum=config.getoption("--grad-accum"),
        seed=config.getoption("--seed"),
        batch_size=config.getoption("--batch-size"),
        weights=config.getoption("--weights"),
        results_path=Path(results) if results else default_results_path(config.rootpath),
        report_path=config.rootpath / config.getoption("--trainbench-report"),
    )
    config.stash[SESSION_KEY] = session
    configure_gate(config)  # reads --trainbench-baseline now: a bad file fails before benchmarks run
    _configure_storage(config)


def _configure_storage(config: pytest.Config) -> None:
    from ..data import context as storage
    from ..data.backends import parse_storage
    from .options import settings_from_config

    ctx = storage.configure(settings_from_config(config))
    if any(parse_storage(s).kind == "s3" for s in ctx.settings.storage):
        try:
            ctx.s3_target()  # start moto / probe the endpoint now: a dead one fails in seconds
        except TrainbenchError as exc:
            raise pytest.UsageError(str(exc)) from None


def pytest_sessionstart(session: pytest.Session) -> None:
    from ..data import storage_context

    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    for line in storage_context().notes:  # e.g. "started a local S3 server (moto) at ...": shown even with -q
        if tr is not None:
            tr.write_line(line)


def pytest_unconfigure(config: pytest.Config) -> None:
    from ..data import context as storage
    from ..workloads import workloads

    storage.close()  # stops a moto server this session started
    # workloads a conftest registered through the hook belong to this session only
    for name in config.stash.get(_HOOK_WORKLOADS, []):
        workloads().unregister(name)


def _environment(bench: BenchSession) -> dict[str, Any]:
    if not bench.environment:
        from ..records.environment import capture_environment

        bench.environment = capture_environment(bench.profile)
    return bench.environment


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    bench = session.config.stash.get(SESSION_KEY, None)
    if bench is not None and session.items:
        _environment(bench)  # start time and versions as the benchmarks begin


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for name, values in AXES.items():
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, values(metafunc.config), scope="function")


@pytest.fixture(scope="session")
def trainbench_session(pytestconfig: pytest.Config) -> BenchSession:
    return pytestconfig.stash[SESSION_KEY]


@pytest.fixture
def trainbench(request: pytest.FixtureRequest, trainbench_session: BenchSession) -> Bench:
    """Runs workloads through the measured harness and records the results for this test."""
    def benchmark() -> Any:
        # requested only by tests that train: other kinds leave pytest-benchmark's fixture unused
        try:
            return request.getfixturevalue("benchmark")
        except pytest.FixtureLookupError:  # pytest-benchmark not installed or disabled
            return None

    return Bench(trainbench_session, request.node.nodeid, benchmark)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    session = item.config.stash.get(SESSION_KEY, None)
    if session is not None and report.when == "call" and report.failed:
        for rec in session.records_by_test.get(item.nodeid, []):
            if rec.status == "passed":
                rec.status = "failed"
                rec.message = _short(report.longreprtext)
    return report


def _short(text: str, limit: int = 500) -> str:
    lines = [l for l in text.strip().splitlines() if l.startswith("E ")] or text.strip().splitlines()[-3:]
    return "\n".join(lines)[:limit]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    bench = session.config.stash.get(SESSION_KEY, None)
    if bench is None or not bench.records:
        return
    from ..cost import fill_costs
    from ..report import write_summary_markdown
    from ..records.results import write_results

    fill_costs(bench.records, session.config.stash.get(_PRICES, None))
    _environment(bench)
    write_results(bench.results_path, bench.environment, bench.records)
    from ..data.report import storage_section

    write_summary_markdown(bench.report_path, bench.environment, bench.records, bench.results_path,
                           sections=[storage_section(bench.records, markdown=True)])
    gate_session(session, Results(bench.environment, bench.records, path=bench.results_path))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    bench = config.stash.get(SESSION_KEY, None)
    if bench is None or not bench.records:
        return
    from ..report import summary_table

    tr = terminalreporter
    tr.write_sep("=", f"trainbench: {len(bench.records)} records on {bench.profile} ({bench.device})")
    tr.write_line(summary_table([r for r in bench.records if r.kind != "collective"]))
    from ..distributed.table import distributed_tables

    if dist_tables := distributed_tables(bench.records):
        tr.write_line("\n" + dist_tables)
    from ..data.report import storage_section

    for line in storage_section(bench.records):
        tr.write_line(line)
    tr.write_line(f"results: {bench.results_path}")
    tr.write_line(f"summary: {bench.report_path}")
    gate_terminal_summary(tr, config)
