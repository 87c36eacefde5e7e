"""Must-show 6: `pytest bench/test_resume.py` leaves kind "resume" records in the results file,
with the comparison outcome and the checkpoint costs the spot cost model reads."""

from pathlib import Path

import torch.distributed.checkpoint  # noqa: F401  (see below)

import trainbench.checkpoint.async_timing  # noqa: F401
import trainbench.checkpoint.drill  # noqa: F401
from trainbench.records.results import load_results
from trainbench.workloads import workload_names

# pytester drops the modules first imported inside its in-process session; load what the bench
# file uses now, so later tests keep one copy of each (reference model classes, torch's DCP ops)
workload_names()

BENCH = Path(__file__).resolve().parents[2] / "bench" / "test_resume.py"


def test_resume_bench_records_outcome_and_checkpoint_timings(pytester):
    pytester.makepyfile(test_resume=BENCH.read_text())
    result = pytester.runpytest("--workload=gpt-small", "--steps=8", "-p", "no:cacheprovider",
                                "--trainbench-results=results.json")
    result.assert_outcomes(passed=1)
    records = load_results(pytester.path / "results.json").records
    assert len(records) == 1
    r = records[0]
    assert (r.kind, r.status, r.workload, r.precision, r.size) == ("resume", "passed", "gpt-small", "fp32", "tiny")
    m = r.metrics
    assert m["ckpt_bytes"] > 100_000  # tiny GPT + AdamW moments, well over 100 kB
    assert m["ckpt_save_s"] > 0 and m["ckpt_load_s"] > 0
    assert (m["ckpt_async_save_s"] is None) == (r.config["async_save_note"] is not None)
    assert m["resume_max_abs_diff"] == 0.0
    c = r.config
    assert c["bitwise_equal"] and c["loss_bitwise_equal"] and c["data_equal"]
    assert 1 <= c["sigterm_step"] < c["sigkill_step"] < c["steps"]
    assert c["resumed_from_step"] <= c["sigkill_step"] and "bitwise" in c["criterion"]
