"""A `pytest bench/` session killed at any moment leaves a results file with every benchmark that
had finished (SIGKILL), or stops cleanly with the running one marked (SIGTERM); and
`--trainbench-resume` completes the sweep. Runs the real suite, tiny, on the CPU.

What "had finished" means is read from the session's own unbuffered `-v` output: pytest prints
test i+1's node id only after test i's protocol (and so its durable write) returned, so every
test followed by another's node id must be in the file, and no test without "PASSED" may be.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trainbench.cli import main as trainbench_main
from trainbench.records.results import load_results

ROOT = Path(__file__).resolve().parents[2]
SUITE = ["bench/test_training.py", "--workload=gpt-small,resnet50", "--steps=1", "--warmup=0"]
KILLS = 20  # seeded SIGKILL moments
RESUMES = 3  # of those, continued with --trainbench-resume


class _Zygote:
    """session_zygote.py: sessions forked from one process that imported torch and the plugin."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("session_zygote.py"))],
                                     cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def start(self, results: Path, *extra: str) -> "_Session":
        args = [*SUITE, "-v", "-p", "no:cacheprovider", f"--trainbench-results={results}",
                f"--trainbench-report={results.with_suffix('.md')}", *extra]
        out = results.with_suffix(".out")
        self.proc.stdin.write(json.dumps({"args": args, "cwd": str(ROOT), "out": str(out)}) + "\n")
        self.proc.stdin.flush()
        return _Session(self, int(self.proc.stdout.readline()), results, out)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(60)


class _Session:
    """One forked `pytest bench/` session; its output in a file as it is written."""

    def __init__(self, zygote: _Zygote, pid: int, results: Path, out: Path):
        self.zygote, self.pid, self.results, self.out = zygote, pid, results, out

    def wait_first_test(self, timeout: float = 120) -> None:
        end = time.perf_counter() + timeout
        while b"::test_training[" not in self.out.read_bytes() and time.perf_counter() < end:
            time.sleep(0.005)

    def kill(self, sig: int) -> None:
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:  # it already ended (and the zygote reaped it)
            pass

    def finish(self) -> tuple[int, str]:
        pid, rc = map(int, self.zygote.proc.stdout.readline().split())
        assert pid == self.pid
        return rc, self.out.read_text(errors="replace")


@pytest.fixture(scope="module")
def zygote():
    z = _Zygote()
    yield z
    z.close()


def _evidence(out: str, order: list[str]) -> tuple[set[str], set[str]]:
    """(tests certainly written: a later test started, tests that may be written: PASSED shown)."""
    started = [t for t in order if f"{t} " in out]
    certain = set(started[:-1])
    passed = {t for t in order if f"{t} PASSED" in out}
    return certain, passed


def _reference(zygote: _Zygote, tmp_path: Path) -> tuple[list[str], set[tuple], float]:
    s = zygote.start(tmp_path / "reference.json")
    s.wait_first_test()
    t0 = time.perf_counter()
    rc, out = s.finish()
    span = time.perf_counter() - t0
    assert rc == 0, out[-3000:]
    res = load_results(s.results)
    return [r.test for r in res.records], {r.key() for r in res.records}, span


def _kill_once(zygote: _Zygote, results: Path, delay: float) -> tuple[int, str]:
    s = zygote.start(results)
    s.wait_first_test()
    time.sleep(delay)
    s.kill(signal.SIGKILL)
    return s.finish()


def test_sigkill_at_seeded_moments_leaves_every_finished_record_and_resume_completes(zygote, tmp_path):
    order, keys, span = _reference(zygote, tmp_path)
    rng = random.Random(16)
    delays = [rng.uniform(0.0, span) for _ in range(KILLS)]
    runs = [(i, *_kill_once(zygote, tmp_path / f"kill-{i}.json", delays[i])) for i in range(KILLS)]
    print(f"reference span {span:.2f} s; records left per kill:",
          [len(load_results(tmp_path / f"kill-{i}.json").records) if (tmp_path / f"kill-{i}.json").exists() else 0
           for i in range(KILLS)])
    kept = []
    for i, rc, out in runs:
        path = tmp_path / f"kill-{i}.json"
        certain, passed = _evidence(out, order)
        if not path.exists():
            assert not certain, f"run {i} (kill after {delays[i]:.2f}s): {sorted(certain)} finished but no file"
            continue
        res = load_results(path)  # valid JSON, right schema: not truncated
        tests = [r.test for r in res.records]
        assert tests == order[:len(tests)], f"run {i}: records out of order or duplicated: {tests}"
        assert certain <= set(tests) <= passed, (i, delays[i], sorted(certain), tests, sorted(passed))
        for r in res.records:
            assert r.status == "passed" and len(r.step_times_s) == r.config["steps"]
        assert trainbench_main(["report", str(path), "--out", str(tmp_path / f"report-{i}"), "--format", "md"]) == 0
        if 0 < len(tests) < len(order):
            kept.append(path)
    assert len({len(load_results(p).records) for p in kept}) >= 1, "no kill landed mid-sweep: widen the delays"
    for path in kept[:RESUMES]:
        s = zygote.start(path, f"--trainbench-resume={path}")
        rc, out = s.finish()
        assert rc == 0, out[-3000:]
        res = load_results(path)
        got = [r.key() for r in res.records]
        assert len(got) == len(set(got)), f"duplicate records after resume: {got}"
        assert set(got) == keys
        assert len(res.environment["sessions"]) == 2


def test_sigterm_marks_the_running_benchmark_and_exits_75(zygote, tmp_path):
    path = tmp_path / "term.json"
    s = zygote.start(path, "--steps=40")  # long enough that the signal lands inside a benchmark
    s.wait_first_test()
    time.sleep(1.0)
    s.kill(signal.SIGTERM)
    rc, out = s.finish()
    assert rc == 75, out[-3000:]
    assert "interrupted by SIGTERM (exit 75)" in out
    res = load_results(path)
    last = res.records[-1]
    assert last.status == "error" and last.message.startswith("interrupted: SIGTERM"), last
    assert last.config["interrupted"] == "SIGTERM"
    assert all(r.status == "passed" for r in res.records[:-1])


def test_resume_on_another_machine_is_refused_naming_the_difference(pytester):
    import json

    pytester.makepyfile(test_x="def test_x(trainbench):\n    trainbench.record(kind='harness')\n")
    assert pytester.runpytest("-p", "no:cacheprovider", "--trainbench-results=r.json").ret == 0
    doc = json.loads((pytester.path / "r.json").read_text())
    doc["environment"]["gpu_name"] = "NVIDIA H100 80GB HBM3"
    (pytester.path / "r.json").write_text(json.dumps(doc))
    result = pytester.runpytest("-p", "no:cacheprovider", "--trainbench-resume=r.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--trainbench-resume=r.json: recorded on a different machine*"
                                 "gpu_name: 'NVIDIA H100 80GB HBM3' in the file, None now*"])


def test_resume_skips_finished_and_appends(pytester):
    pytester.makepyfile(test_x="import pytest\n@pytest.mark.parametrize('i', range(3))\n"
                               "def test_x(trainbench, i):\n    trainbench.record(kind='harness')\n")
    assert pytester.runpytest("-p", "no:cacheprovider", "--trainbench-results=r.json", "-k", "0 or 1").ret == 0
    result = pytester.runpytest("-p", "no:cacheprovider", "--trainbench-resume=r.json")
    result.assert_outcomes(passed=1, deselected=2)
    res = load_results(pytester.path / "r.json")
    assert [r.test for r in res.records] == [f"test_x.py::test_x[{i}]" for i in range(3)]
    assert [r.config["session"] for r in res.records] == [0, 0, 1]


def test_two_sessions_in_one_second_get_different_files(tmp_path):
    import multiprocessing

    from trainbench.pytest_plugin.session import default_results_path

    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=lambda: queue.put(default_results_path(tmp_path))) for _ in range(2)]
    for p in procs:
        p.start()
    paths = [queue.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(30)
    assert paths[0].name[:16] == paths[1].name[:16], "not the same second: rerun"
    assert paths[0] != paths[1] and paths[0].parent == paths[1].parent


def test_results_and_reports_get_the_umask_mode(pytester):
    pytester.makepyfile(test_x="def test_x(trainbench):\n    trainbench.record(kind='harness')\n")
    old = os.umask(0o022)
    try:
        assert pytester.runpytest("-p", "no:cacheprovider", "--trainbench-results=r.json").ret == 0
        assert trainbench_main(["report", str(pytester.path / "r.json"), "--out", str(pytester.path / "out")]) == 0
    finally:
        os.umask(old)
    written = [pytester.path / "r.json", pytester.path / "reports" / "latest.md", *(pytester.path / "out").iterdir()]
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in written} == {p.name: "0o644" for p in written}
