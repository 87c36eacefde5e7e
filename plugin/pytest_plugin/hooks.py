"""The pytest entry point (`pytest11: trainbench`): options, fixtures and hooks only; the work
lives in the harness, record and report modules."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from . import hookspec
from .distributed import trainbench_dist  # noqa: F401  (fixture)
from .drills import deselect_drills
from ..errors import TrainbenchError
from .fixture import Bench
from .gate import configure_gate, gate_session
from .gate import terminal_summary as gate_terminal_summary
from .options import add_options
from ..records.record import Record
from ..records.results import Results
from ..catalog.profile import resolve_profile
from .session import BenchSession, default_results_path
from .persist import EXIT_INTERRUPTED, install_stop_handler, record_interruption, write_now

pytest_plugins = ["trainbench.pytest_plugin.terminal"]  # plan line, progress, summary writing

SESSION_KEY = pytest.StashKey[BenchSession]()
_HOOK_WORKLOADS = pytest.StashKey[list]()
_PRICES = pytest.StashKey[list]()  # price rows for cost_per_epoch_usd (validated at configure)
_RESTORE_SIGTERM = pytest.StashKey[Callable[[], None]]()
_DRILLS_LEFT_OUT = pytest.StashKey[int]()  # drills deselected in this session

# Parametrized axes: a test that requests one of these fixtures gets one case per value. An axis
# function returning None is not swept this session: the fixture of that name gives its default
# and test ids stay as they were (baselines keyed by test id keep matching).
AXES: dict[str, Callable[[pytest.Config], list[str] | None]] = {}


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


@_axis("tb_finetune")
def _finetunes(config: pytest.Config) -> list[str] | None:
    return config.getoption("--finetune")  # None: the tb_finetune fixture's "full"


@_axis("tb_compile")
def _compiles(config: pytest.Config) -> list[str] | None:
    return config.getoption("--compile")  # None: the tb_compile fixture's "none"


@pytest.fixture
def tb_finetune() -> str:
    """Fine-tuning mode of this benchmark ("full" unless --finetune sweeps it)."""
    return "full"


@pytest.fixture
def tb_compile() -> str:
    """torch.compile mode of this benchmark ("none" unless --compile sweeps it)."""
    return "none"


@_axis("tb_topology")
def _topologies(config: pytest.Config) -> list[str]:
    return config.getoption("--topology") or ["default"]


@_axis("tb_storage")
def _storages(config: pytest.Config) -> list:
    from ..data import parse_storage

    return config.getoption("--storage") or [parse_storage("local")]


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
    config.addinivalue_line("markers", "drill: convergence and preemption drills, minutes each: left out of a plain "
                                       "run (select with --drills, -m drill, -k, or by naming the file)")
    config.addinivalue_line("markers", "iops: stall against an IOPS-bound disk, K = 150, 300, 500 (select with -m iops)")
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
        activation_checkpointing=config.getoption("--activation-checkpointing"),
        tuning=config.getoption("--tuning"),
        results_path=Path(results) if results else default_results_path(config.rootpath),
        report_path=config.rootpath / config.getoption("--trainbench-report"),
        loader=dict(
            num_workers=(config.getoption("--num-workers") or [None])[0],
            prefetch_factor=config.getoption("--prefetch-factor"),
            pin_memory=config.getoption("--pin-memory"),
            persistent_workers=config.getoption("--persistent-workers"),
        ),
    )
    config.stash[SESSION_KEY] = session
    _configure_resume(config, session)
    configure_gate(config)  # reads --trainbench-baseline now: a bad file fails before benchmarks run
    _configure_storage(config)


def _configure_resume(config: pytest.Config, bench: BenchSession) -> None:
    path = config.getoption("--trainbench-resume")
    if not path:
        return
    from .resume import load_resume

    try:
        done = load_resume(path, _environment(bench))
    except TrainbenchError as exc:
        raise pytest.UsageError(str(exc)) from None
    bench.environment, bench.results_path = done.environment, Path(path)
    bench.session_index = len(done.environment["sessions"]) - 1
    for rec in done.records:
        bench.add(rec)


def _configure_storage(config: pytest.Config) -> None:
    from ..data import context as storage
    from .options import settings_from_config

    ctx = storage.configure(settings_from_config(config))
    if any(spec.kind == "s3" for spec in config.getoption("--storage") or []):
        try:
            ctx.s3_target()  # start moto / probe the endpoint now: a dead one fails in seconds
        except TrainbenchError as exc:
            raise pytest.UsageError(str(exc)) from None


def pytest_sessionstart(session: pytest.Session) -> None:
    from ..data import storage_context

    if SESSION_KEY in session.config.stash:
        session.config.stash[_RESTORE_SIGTERM] = install_stop_handler(session.config.stash[SESSION_KEY])

    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    for line in storage_context().notes:  # e.g. "started a local S3 server (moto) at ...": shown even with -q
        if tr is not None:
            tr.write_line(line)


def pytest_unconfigure(config: pytest.Config) -> None:
    from ..data import context as storage
    from ..workloads import workloads

    storage.close()  # stops a moto server this session started
    config.stash.get(_RESTORE_SIGTERM, lambda: None)()
    # workloads a conftest registered through the hook belong to this session only
    for name in config.stash.get(_HOOK_WORKLOADS, []):
        workloads().unregister(name)


def _environment(bench: BenchSession) -> dict[str, Any]:
    if not bench.environment:
        from ..records.environment import capture_environment

        bench.environment = capture_environment(bench.profile)
    return bench.environment


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    config.stash[_DRILLS_LEFT_OUT] = deselect_drills(config, items)
    bench = config.stash.get(SESSION_KEY, None)
    if bench is None or bench.session_index is None:
        return
    done = {r.test for r in bench.records}  # --trainbench-resume: what R.json has finished
    skip = [item for item in items if item.nodeid in done]
    if skip:
        config.hook.pytest_deselected(items=skip)
        items[:] = [item for item in items if item.nodeid not in done]


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    n = config.stash.get(_DRILLS_LEFT_OUT, 0)
    if not n:
        return []
    return [f"trainbench: {n} convergence/preemption drill(s) left out (minutes each); run them with --drills "
            "(or -m drill, -k, or by naming bench/test_convergence.py / bench/test_preemption.py)"]


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    bench = session.config.stash.get(SESSION_KEY, None)
    if bench is not None and session.items:
        _environment(bench)  # start time and versions as the benchmarks begin


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for name, values in AXES.items():
        if name in metafunc.fixturenames and (swept := values(metafunc.config)) is not None:
            metafunc.parametrize(name, swept, ids=str, scope="function")


@pytest.fixture(scope="session")
def trainbench_session(pytestconfig: pytest.Config) -> BenchSession:
    return pytestconfig.stash[SESSION_KEY]


@pytest.fixture
def trainbench(request: pytest.FixtureRequest, trainbench_session: BenchSession):
    """Runs workloads through the measured harness and records the results for this test."""
    from ..harness.oom import release_device_memory

    def benchmark() -> Any:
        # requested only by tests that train: other kinds leave pytest-benchmark's fixture unused
        try:
            return request.getfixturevalue("benchmark")
        except pytest.FixtureLookupError:  # pytest-benchmark not installed or disabled
            return None

    yield Bench(trainbench_session, request.node.nodeid, benchmark)
    # the cached blocks of this benchmark would crowd the next one, and torchrun ranks or
    # `trainbench train` subprocesses that share the GPU
    release_device_memory()


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


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Any:
    bench = item.config.stash.get(SESSION_KEY, None)
    if bench is not None:
        bench.running, bench.pending = item.nodeid, {}
    result = yield  # a stop (SIGTERM, Ctrl-C) raises through here: sessionfinish records it
    if bench is not None:
        bench.running = None
        _write(item.config, bench)  # this test's records are on disk before the next test starts
    return result


def _write(config: pytest.Config, bench: BenchSession) -> None:
    from ..data.report import storage_section
    from ..report.compile_ratio import compile_lines

    env = _environment(bench)
    if bench.matmul_peaks:  # measured during the session: the denominators of mfu_achievable
        env["matmul_peak"] = {p: peak.to_json() for p, peak in bench.matmul_peaks.items()}
    write_now(bench, env, config.stash.get(_PRICES, None),
              lambda records: [storage_section(records, markdown=True), compile_lines(records)])


def _short(text: str, limit: int = 500) -> str:
    lines = [l for l in text.strip().splitlines() if l.startswith("E ")] or text.strip().splitlines()[-3:]
    return "\n".join(lines)[:limit]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    bench = session.config.stash.get(SESSION_KEY, None)
    if bench is None:
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        record_interruption(bench)  # the benchmark in progress, if any: status error, "interrupted"
    if bench.interrupted == "SIGTERM":
        session.exitstatus = EXIT_INTERRUPTED  # documented in persist.py and README
    if not bench.records:
        return
    bench.written = -1  # the last write also carries costs of records changed after their test
    _write(session.config, bench)
    if bench.interrupted is not None:
        return  # no gate verdict on a sweep cut short
    gate_session(session, Results(bench.environment, bench.records, path=bench.results_path))


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    bench = config.stash.get(SESSION_KEY, None)
    if bench is None or not bench.records:
        return
    from .terminal import write_summary

    tr = terminalreporter
    write_summary(tr, bench)
    if bench.interrupted is not None:
        code = f"exit {EXIT_INTERRUPTED}" if bench.interrupted == "SIGTERM" else "exit 2"
        tr.write_line(f"interrupted by {bench.interrupted} ({code}): every finished record is in "
                      f"{bench.results_path}; continue with --trainbench-resume={bench.results_path}")
    gate_terminal_summary(tr, config)
