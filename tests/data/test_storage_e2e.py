"""Must-show 2: `pytest bench/ --storage=memory,local,s3,s3+cache` runs end to end on a CPU
against a moto server the suite starts (and stops), and the summary shows per-backend
throughput, stall ratio and cold vs warm cache. (Kept fast: one workload, one worker count,
3 measured steps; CI runs this test.)"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from trainbench.records.results import load_results

ROOT = Path(__file__).resolve().parents[2]


def test_storage_bench_on_memory_local_s3_and_cached_s3(tmp_path):
    results, report = tmp_path / "results.json", tmp_path / "latest.md"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "bench/test_storage.py", "-q", "-p", "no:cacheprovider",
         "--storage=memory,local,s3,s3+cache", "--workload=resnet50", "--num-workers=1", "--steps=3", "--warmup=1",
         f"--data-dir={tmp_path / 'data'}", f"--trainbench-results={results}", f"--trainbench-report={report}"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    print(f"took {time.perf_counter() - t0:.0f} s")
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:] + proc.stderr[-2000:]

    m = re.search(r"started a local S3 server \(moto\) at http://127\.0\.0\.1:(\d+)", out)
    assert m, out[:2000]
    with socket.socket() as s:  # stopped at session end
        assert s.connect_ex(("127.0.0.1", int(m.group(1)))) != 0

    res = load_results(results)
    training = {r.storage: r for r in res.records if r.kind == "training"}
    loader = {r.storage: r for r in res.records if r.kind == "input"}
    want = {"memory", "local", "s3", "s3+cache[cold]", "s3+cache[warm]"}
    assert set(training) == want and set(loader) == want
    for r in training.values():
        assert r.status == "passed" and r.metrics["samples_per_s"] > 0
        assert 0 <= r.metrics["stall_ratio"] <= 1 and 0 <= r.metrics["stall_differential"] <= 1
    assert training["s3+cache[cold]"].metrics["stall_fetch"] is not None
    assert loader["s3+cache[cold]"].metrics["fetch_ms_per_sample"] is not None
    for r in loader.values():
        assert r.metrics["samples_per_s"] > 0 and r.metrics["mb_per_s"] > 0

    for section in ("input pipeline: loader alone", "training per storage backend", "recommendation"):
        assert section in out and section in report.read_text()
    assert "s3+cache[warm]" in out and "s3+cache[cold]" in out
