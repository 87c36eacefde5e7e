"""Distributed benchmarks as users run them: `pytest bench/ -k collectives` on 2 gloo ranks
under torchrun, a rank killed mid-run, a hung rank, and bad --topology values."""

import os
import time
from pathlib import Path

import psutil
import pytest

from trainbench.distributed.launch import Launch, RankFailure, launch
from trainbench.distributed.worker import FAULT_ENV
from trainbench.records.results import load_results

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 120  # --dist-timeout in these sessions: a hang would fail after it, not block CI


def _session(pytester, *args):
    res, md = pytester.path / "results.json", pytester.path / "latest.md"
    result = pytester.runpytest_subprocess(
        *args, f"--trainbench-results={res}", f"--trainbench-report={md}", f"--dist-timeout={TIMEOUT}",
        "-p", "no:cacheprovider", "-rs", timeout=3 * TIMEOUT,
    )
    return result, (load_results(res) if res.exists() else None)


def test_collectives_on_two_gloo_ranks_record_busbw_per_size(pytester):
    result, res = _session(pytester, str(REPO / "bench"), "-k", "collectives", "--topology=default,no-p2p")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*topology 'no-p2p' sets NCCL_P2P_DISABLE=1, NCCL_NVLS_ENABLE=0, which only NCCL reads*gloo*"])
    coll = [r for r in res.records if r.kind == "collective" and r.status == "passed"]
    by_op = {}
    for r in coll:
        by_op.setdefault(r.config["op"], []).append(r)
        assert r.world_size == 2 and r.topology == "default" and r.gpu == "cpu"
        assert r.config["correct"] is True and r.config["backend"] == "gloo"
        assert r.config["nccl_version"] is None and r.config["detected_topology"]["nvlink_links_total"] is None
        m = r.metrics
        assert m["algbw_gbps"] == r.config["size_bytes"] / m["time_s"] / 1e9
        assert m["time_min_s"] <= m["time_s"] <= m["time_max_s"] and len(r.step_times_s) == r.config["trials"]
    assert sorted(by_op) == ["all_gather", "all_reduce", "broadcast", "reduce_scatter"]
    n = 2
    for r in by_op["all_reduce"]:  # 2(n-1)/n: exactly 1.0 for two ranks
        assert r.metrics["busbw_gbps"] / r.metrics["algbw_gbps"] == 2 * (n - 1) / n
    for op in ("all_gather", "reduce_scatter"):  # (n-1)/n: exactly 0.5 for two ranks
        for r in by_op[op]:
            assert r.metrics["busbw_gbps"] / r.metrics["algbw_gbps"] == (n - 1) / n
    for r in by_op["broadcast"]:
        assert r.metrics["busbw_gbps"] == r.metrics["algbw_gbps"]
    sizes = sorted(r.config["size_bytes"] for r in by_op["all_reduce"])
    assert sizes[0] == 1024 and sizes[-1] == 4 * 2**20 and len(sizes) == 7  # one record per size
    (skipped,) = [r for r in res.records if r.status == "skipped"]
    assert skipped.topology == "no-p2p" and "NCCL" in skipped.message


KILLED = """
def test_training_first(trainbench):
    trainbench.train("gpt-small")

def test_collectives(trainbench_dist):
    trainbench_dist.collectives("default", max_bytes=65536, trials=20, ops="all_reduce")
"""


def test_killed_rank_fails_the_benchmark_naming_it_and_keeps_other_records(pytester, monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "kill:1@5")  # rank 1 SIGKILLs itself at its 6th timed trial
    pytester.makepyfile(test_bench=KILLED)
    start = time.perf_counter()
    result, res = _session(pytester, "--steps=2", "--warmup=0")
    elapsed = time.perf_counter() - start
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*rank 1 (local rank 1 on host *) was killed by signal 9 (SIGKILL)*"])
    assert elapsed < TIMEOUT  # failed on the rank's death, not on the timeout
    train, coll = sorted(res.records, key=lambda r: r.kind, reverse=True)
    assert (train.kind, train.status) == ("training", "passed") and train.metrics["samples_per_s"] > 0
    assert (coll.kind, coll.status) == ("collective", "failed")
    assert "rank 1" in coll.message and "SIGKILL" in coll.message and coll.config["failed_ranks"][0] == 1


def test_hung_rank_is_killed_at_the_timeout_and_named_not_waited_for(tmp_path, monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "hang:1@1")
    spec = Launch("trainbench.cli.rank", ["collectives", "--max-bytes", "4096", "--backend", "gloo"], 2, tmp_path,
                  timeout_s=20)
    start = time.perf_counter()
    with pytest.raises(RankFailure) as exc:
        launch(spec)
    assert time.perf_counter() - start < 20 + 15  # the timeout plus the kill's grace period
    assert exc.value.timed_out and exc.value.ranks == [0, 1]
    assert "timed out after 20 s" in str(exc.value) and "ranks without a result: 0, 1" in str(exc.value)
    for r in (0, 1):  # the ranks themselves are gone, not only torchrun
        pid = int((tmp_path / f"rank{r}.pid").read_text())
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("value, expected", [
    ("nvlink", "*unknown topology --topology=nvlink; known: default, no-p2p, no-rdma, ring, socket, tree, or env:*"),
    ("default,env:NCCL_ALGO=Ring;reboot", "*value 'Ring;reboot' of NCCL_ALGO*shell metacharacters*"),
    ("env:HOME=/tmp", "*'HOME' is not a communication setting; allowed: NCCL_*"),
    ("env:NCCL_ALGO=", "*NCCL_ALGO has an empty value*"),
])
def test_bad_topology_is_a_usage_error_listing_presets(pytester, value, expected):
    pytester.makepyfile(test_bench="def test_x(tb_topology):\n    pass\n")
    result = pytester.runpytest(f"--topology={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])


def test_topology_axis_parametrizes(pytester):
    pytester.makepyfile(test_bench="def test_x(tb_topology):\n    pass\n")
    result = pytester.runpytest("--topology=default,env:NCCL_ALGO=Tree,NCCL_PROTO=LL", "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*test_x?default?*", "*test_x?env:NCCL_ALGO=Tree,NCCL_PROTO=LL?*"])


def test_one_rank_records_collectives_and_ddp_as_skipped(pytester):
    """A single-GPU machine: busbw's factor is 0 at one rank; nothing to measure, nothing failed."""
    result, res = _session(pytester, str(REPO / "bench"), "-k", "collectives or ddp", "--nproc=1",
                           "--workload=gpt-small")
    assert result.ret == 0
    kinds = {(r.kind, r.status) for r in res.records}
    assert kinds == {("collective", "skipped"), ("ddp", "skipped")}
    assert all("at least 2 ranks" in r.message for r in res.records)
