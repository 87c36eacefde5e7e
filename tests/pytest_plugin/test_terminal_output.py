"""What a user reads in the terminal, as users run it (pytester, -q, 120 columns): the plan
line and progress inside a benchmark, and the per-kind summary that latest.md repeats."""

import re

from pytester_workloads import PAIRS_DATASET

CONFTEST = PAIRS_DATASET + """
import os
import time

def slow_loss(m, b):
    time.sleep(float(os.environ.get("TB_STEP_SLEEP", "0")))  # a step that takes a while
    return F.cross_entropy(m(b["x"]), b["y"])

def pytest_trainbench_register_workloads(register):
    register(Workload(
        name="my-mlp", model=lambda size: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)),
        dataset=lambda size, n, seed: Pairs(n, seed), loss=slow_loss,
        optimizer=lambda params, size: torch.optim.SGD(params, lr=0.1),
        flops_per_sample=lambda size: 6 * (8 * 16 + 16 * 2), epoch_samples=1000, batch_size={"tiny": 4}))
"""

BENCH = """
import pytest
from trainbench.records.record import Record

def test_training(trainbench, tb_workload, tb_precision):
    trainbench.train(tb_workload, precision=tb_precision)

def test_checks(trainbench):
    for name, result, msg, fix in (("torch", "pass", "2.13", None), ("gpu", "n/a", "no GPU", None),
                                   ("shm", "warn", "/dev/shm is 64 MiB, workers share batches through it", "docker run --shm-size=8g")):
        trainbench.record(test=f"{trainbench.nodeid}::{name}", kind="preflight", status="passed",
                          message=msg, config={"check": name, "result": result, "fix": fix})

def test_collectives(trainbench):
    for op in ("all_reduce", "broadcast"):
        for size in (1024, 65536, 4194304):
            trainbench.record(kind="collective", world_size=2, topology="default", step_times_s=[1e-3] * 6,
                              metrics={"busbw_gbps": size / 1e6, "algbw_gbps": size / 2e6, "time_s": 1e-3},
                              config={"op": op, "size_bytes": size, "dtype": "float32"})
"""

FAST = ["-q", "-p", "no:cacheprovider", "--workload=my-mlp"]


def _summary(stdout_lines):
    start = next(i for i, l in enumerate(stdout_lines) if "trainbench:" in l and "records on" in l)
    end = next(i for i, l in enumerate(stdout_lines) if l.startswith("results:"))
    return stdout_lines[start + 1 : end]


def test_summary_fits_120_columns_one_table_per_kind_and_latest_md_repeats_it(pytester, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest(*FAST, "--steps=5", "--warmup=1", "--precision=fp32,tf32")
    result.assert_outcomes(passed=3, skipped=1)
    lines = _summary(result.outlines)
    headings = [l for l in lines if l.startswith("--- ")]
    assert headings == [
        "--- training ---", "--- preflight checklist ---",
        "--- collectives: busbw GB/s by message size (nccl-tests; size = whole buffer) ---",
        "--- not measured (skipped, failed, out of memory) ---", "--- notes ---"]
    assert all(len(l) <= 120 for l in lines), max(lines, key=len)  # (the file paths after it are what they are)
    # a snapshot of the table shapes, numbers masked
    shape = [re.sub(r"\d[\d,.]*", "#", l).rstrip() for l in lines]
    assert re.sub(r" +", " ", shape[1]) == "training[...] batch samples/s step ms p#-p# ms stall mem steady"
    assert any(re.sub(r" +", " ", s).startswith("my-mlp-fp# # #") for s in shape), shape
    assert re.sub(r" +", " ", shape[shape.index("--- preflight checklist ---") + 1]) == " # n/a, # pass, # warn"
    assert "  [WARN] shm: /dev/shm is 64 MiB, workers share batches through it -- fix: docker run --shm-size=8g" in lines
    assert "  [pass] torch" in lines and "  [n/a] gpu" in lines
    coll = lines.index(headings[2])
    assert re.sub(r" +", " ", lines[coll + 1]) == "op dtype ranks topology 1.0 KiB 64.0 KiB 4.0 MiB steady"
    assert len([l for l in lines[coll:] if l.startswith(("all_reduce", "broadcast"))]) == 2
    # no table row that is n/a in every metric; the skip says why
    for l in lines:
        cells = l.split()
        assert not (len(cells) > 3 and all(c == "n/a" for c in cells[2:-1])), l
    assert any("skipped: test_training[my-mlp-tf32] -- --precision=tf32" in l for l in lines)
    assert any(l.startswith("units:") for l in lines)
    assert not any("pytest-benchmark" in l or "Min " in l for l in result.outlines)  # its table: only when asked
    md = (pytester.path / "reports" / "latest.md").read_text()
    for heading in headings:
        assert f"## {heading.strip('- ')}" in md
    assert "| training[...] | batch" in re.sub(r" +", " ", md)
    assert "| all_reduce | float32 | 2 | default |" in re.sub(r" +", " ", md)
    assert "tf32" in md.split("## not measured")[1]


def test_plan_line_and_progress_with_q(pytester, monkeypatch):
    monkeypatch.setenv("TB_STEP_SLEEP", "0.3")  # 10 steps x 0.3 s: a benchmark of about 4 s
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest(*FAST, "-k", "training", "--steps=10", "--warmup=1", "--trainbench-progress=on")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "trainbench plan: 1 benchmarks on cpu (cpu), size tiny, 1+10 steps each; estimate ~* s "
        "(an estimate, not measured: *)",
        "  training?my-mlp-fp32?: measure step */10, *.** s/step, ~* s left",
        "  training?my-mlp-fp32?: measured 10 steps, *.** s/step (host clock)",
    ])


def test_progress_is_silent_when_not_a_terminal(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest(*FAST, "-k", "training", "--steps=3", "--warmup=1")
    result.assert_outcomes(passed=1)
    assert not any("trainbench plan:" in l or "s/step" in l for l in result.outlines)


def test_benchmark_table_when_asked(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_bench=BENCH)
    result = pytester.runpytest(*FAST, "-k", "training", "--steps=3", "--warmup=1", "--trainbench-benchmark-table")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*benchmark*: 1 tests*"])
