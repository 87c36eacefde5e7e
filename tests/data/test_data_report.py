"""The storage summary section and its recommendation (fewest workers, then lowest stall)."""

from __future__ import annotations

from trainbench.data.report import recommend, storage_section
from trainbench.records.record import Record


def _train(workload, storage, workers, stall, status="passed"):
    return Record(test=f"t[{workload}-{storage}-{workers}]", kind="training", workload=workload, storage=storage,
                  status=status, metrics={"stall_ratio": stall, "samples_per_s": 10.0},
                  config={"num_workers": workers, "storage_bench": True})


def test_recommends_fewest_workers_under_target_then_lowest_stall():
    recs = [
        _train("resnet50", "s3", 0, 0.60), _train("resnet50", "s3", 4, 0.04), _train("resnet50", "s3", 2, 0.30),
        _train("resnet50", "local", 2, 0.049), _train("resnet50", "memory", 2, 0.01),
        _train("resnet50", "memory", 1, 0.2, status="failed"),
        _train("bert-base", "s3", 0, 0.2), _train("bert-base", "s3", 2, 0.1),
        Record(test="t", kind="training", workload="gpt-small", storage="synthetic", metrics={"stall_ratio": 0.0}),
    ]
    rec = recommend(recs)
    assert rec["resnet50"] == {"storage": "memory", "num_workers": 2, "stall": 0.01}
    assert rec["bert-base"]["storage"] is None and rec["bert-base"]["best_workers"] == 2
    assert "gpt-small" not in rec  # not a storage benchmark
    text = "\n".join(storage_section(recs))
    assert "resnet50: --storage=memory --num-workers=2 (stall 1.0%)" in text
    assert "bert-base: nothing tried kept stall under 5%" in text and "workers tried [0, 2]" in text
    cached = recommend([_train("gpt-small", "s3+cache[warm]", 1, 0.02)])
    assert cached["gpt-small"]["storage"] == "s3+cache[warm]"
    assert "gpt-small: --storage=s3+cache (warm cache) --num-workers=1" in "\n".join(
        storage_section([_train("gpt-small", "s3+cache[warm]", 1, 0.02)]))


def test_no_storage_records_no_section():
    assert storage_section([Record(test="t", kind="training", workload="w", metrics={"stall_ratio": 0.1})]) == []
