"""Storage advice when nothing met the stall target: never the best setup already tried, and
the limit (I/O, decode, workers) named from the measured fetch/prep split."""

from trainbench.data.report import recommend, storage_section
from trainbench.records.record import Record


def _train(storage, workers, stall, **metrics):
    return Record(test=f"t[{storage}-{workers}]", kind="training", workload="resnet50", storage=storage,
                  metrics={"stall_ratio": stall, "samples_per_s": 10.0, **metrics},
                  config={"num_workers": workers, "storage_bench": True})


def test_best_tried_cache_is_not_suggested_again_and_io_is_named():
    recs = [_train("s3", 2, 0.60), _train("s3+cache[cold]", 2, 0.40, stall_fetch=0.30, stall_prep=0.10),
            _train("s3+cache[warm]", 2, 0.45)]
    rec = recommend(recs)["resnet50"]
    assert rec["best_storage"] == "s3+cache[cold]"
    assert rec["limit"] == "I/O" and "30.0%" in rec["why"] and "10.0%" in rec["why"]
    assert not any("+cache" in s for s in rec["suggest"])  # s3+cache was tried and was the best
    assert any("faster tier" in s for s in rec["suggest"])
    text = "\n".join(storage_section(recs))
    assert "limited by I/O" in text and "--storage=s3+cache" not in text.split("try:")[-1]


def test_prep_share_larger_than_fetch_names_decode():
    recs = [_train("s3+cache[cold]", 1, 0.50, stall_fetch=0.05, stall_prep=0.45)]
    rec = recommend(recs)["resnet50"]
    assert rec["limit"] == "decode" and rec["suggest"][0] == "--num-workers=2"


def test_memory_backend_stall_is_decode_in_the_loader():
    """Why the no-I/O memory backend can stall more than local disk: decode, one worker."""
    recs = [_train("memory", 1, 0.30), _train("local", 1, 0.35)]
    rec = recommend(recs)["resnet50"]
    assert rec["best_storage"] == "memory" and rec["limit"] == "decode"
    assert "no I/O in the path" in rec["why"] and "1 loader worker" in rec["why"]
    assert not any(s.startswith("--storage=memory") or "faster tier" in s for s in rec["suggest"])


def test_stall_falling_with_workers_names_workers_and_suggests_more_than_tried():
    recs = [_train("local", 0, 0.60), _train("local", 2, 0.30), _train("local", 4, 0.12)]
    rec = recommend(recs)["resnet50"]
    assert rec["limit"] == "workers" and "4, the most tried" in rec["why"]
    assert "--num-workers=8" in rec["suggest"] and "--num-workers=4" not in rec["suggest"]


def test_storage_section_fits_120_columns():
    recs = [_train("s3+cache[cold]", 4, 0.40, stall_fetch=0.3, stall_prep=0.1, samples_per_s_preloaded=2345.6,
                   stall_differential=0.3, gpu_util_mean=55.0), _train("s3+cache[warm]", 4, 0.10)]
    lines = [l for block in storage_section(recs) for l in block.splitlines()]
    assert max(map(len, lines)) <= 120 and any("decode" in l for l in lines)


def test_iops_check_rows_make_the_agreement_table_in_terminal_and_markdown():
    rec = _train("throttle:1000,300", 1, 0.857, samples_per_s_preloaded=2067.0, stall_in_loop=0.616)
    rec.config["iops_check"] = {"iops": 300, "expected_stall": 0.855, "gap": 0.002, "disk_reached": 0.986}
    plain = [_train("local", 1, 0.2, stall_in_loop=0.2)]
    for markdown in (False, True):
        text = "\n".join(storage_section([rec, *plain], markdown=markdown))
        assert "stall against an IOPS-bound disk" in text
        row = next(l for l in text.splitlines() if "300" in l and "98.6%" in l)
        assert "0.855" in row and "0.857" in row and "0.616" in row and "0.002" in row
    assert "IOPS-bound" not in "\n".join(storage_section(plain))  # no check ran: no table
