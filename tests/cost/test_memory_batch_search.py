"""The largest-batch search catches out-of-memory and records it (a fake trial on CPU)."""

from __future__ import annotations

import pytest
import torch
from hypothesis import example, given, settings, strategies as st

from trainbench.cost.batch_search import largest_batch_search, search_records
from trainbench.records.results import load_results, write_results


def fake(capacity: int, calls: list | None = None):
    def trial(batch: int) -> None:
        if calls is not None:
            calls.append(batch)
        if batch > capacity:
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {batch} MiB\nmore")

    return trial


@settings(deadline=None)  # timing noise on a shared CPU must not fail arithmetic
@given(st.integers(min_value=0, max_value=5000), st.integers(min_value=1, max_value=16))
@example(capacity=2561, start=5)  # doubling overshoots the limit, and the limit itself runs out
def test_search_finds_the_exact_capacity(capacity, start):
    s = largest_batch_search(fake(capacity), start=start, limit=4096)
    assert s.largest == (min(capacity, 4096) or None)  # None: not even one sample fits
    assert any(t.status == "oom" for t in s.trials) or s.hit_limit
    assert all((t.status == "passed") == (t.batch <= capacity) for t in s.trials)


def test_search_stops_at_the_limit_and_says_so():
    calls = []
    s = largest_batch_search(fake(10_000, calls), start=1, limit=100)
    assert s.largest == 100 and s.hit_limit and max(calls) == 100


def test_other_errors_are_not_swallowed():
    def broken(batch):
        raise ValueError("a real bug")

    with pytest.raises(ValueError):
        largest_batch_search(broken)


def test_trials_become_records_in_a_results_file(tmp_path):
    s = largest_batch_search(fake(37), start=8)
    recs = search_records(s, "gpt-small", "full", "bf16", "h100")
    path = write_results(tmp_path / "r.json", {"gpu_profile": "h100"}, recs)
    back = load_results(path).records
    assert {r.status for r in back} == {"passed", "oom"}
    assert all(r.kind == "memory" and r.config["largest_batch"] == 37 for r in back)
    oom = next(r for r in back if r.status == "oom")
    assert oom.message.startswith("CUDA out of memory") and "\n" not in oom.message


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_search_on_the_tiny_preset_runs():
    from trainbench.cost.batch_search import cuda_trial

    s = largest_batch_search(cuda_trial("gpt-small", "tiny", "fp32"), start=64, limit=256)
    assert s.largest == 256 and s.hit_limit
