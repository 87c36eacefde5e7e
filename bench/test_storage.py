"""Storage backends and the input pipeline: how much does the data path starve the device?

    pytest bench/test_storage.py                                   # local; 1 worker on CPU, 0,2,4,8 on GPU
    pytest bench/ --storage=memory,local,s3,s3+cache               # s3 on a local moto server
    pytest bench/ --storage=gp3,essd-pl1,throttle:50,1000 --num-workers=0,2,4,8
    pytest bench/ --storage=s3+cache --s3-endpoint=https://s3.us-east-1.amazonaws.com --s3-bucket=mine

(a) test_loader: the loader alone, samples/s and MB/s per backend and worker count (kind
"input"); +cache backends report a cold and a warm epoch. (b) test_training_storage: training
from each backend: measured stall ratio, GPU utilization, and throughput against the same run
with batches pre-loaded in device memory (the differential stall, DS-Analyzer); +cache runs
cold then warm, the difference being the fetch share. (c) The summary recommends, per workload,
the fewest workers and a backend with stall < 5%.
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch

from trainbench.data import parse_storage, storage_loader
from trainbench.data.stall import apply_differential, explain_disagreement, thread_settings
from trainbench.data.loader_bench import preloaded_batches, time_epoch
from trainbench.harness.run import loader_config, resolve_device, run
from trainbench.workloads import get_workload

PRELOADED = 8  # distinct batches kept in device memory for the differential run (cycled)


def _sizes(trainbench, workload: str) -> tuple[int, int]:
    s = trainbench.session
    batch = s.batch_size or get_workload(workload).default_batch_size(s.size)
    return batch, batch * s.grad_accum * (s.steps + s.warmup)  # the training run's data set


def _bytes_per_sample(loader, workload: str, size: str, seed: int) -> float:
    data = getattr(loader, "trainbench_data", None)
    if data is not None:
        return data.manifest.total_bytes / data.manifest.count
    sample = get_workload(workload).dataset(size, 1, seed)[0]
    return float(sum(t.numel() * t.element_size() for t in sample.values()))


def test_loader(trainbench, tb_workload, tb_storage, tb_workers):
    s = trainbench.session
    batch, count = _sizes(trainbench, tb_workload)
    cfg = trainbench.config(tb_workload, storage=tb_storage, num_workers=tb_workers)
    lcfg = loader_config(cfg, batch, s.device)
    loader = storage_loader(tb_storage, tb_workload, s.size, count, s.seed, lcfg)
    bps = _bytes_per_sample(loader, tb_workload, s.size, s.seed)
    cached = tb_storage.cached
    epochs = [("cold", time_epoch(loader, bps))]
    if cached:
        epochs.append(("warm", time_epoch(loader, bps)))
    common = dict(kind="input", workload=tb_workload, size=s.size, batch_size=batch)
    for state, rate in epochs:
        label = f"{tb_storage}[{state}]" if cached else tb_storage.text
        metrics = {"samples_per_s": rate.samples_per_s, "mb_per_s": rate.mb_per_s,
                   "batch_wait_median_s": sorted(rate.batch_waits_s)[len(rate.batch_waits_s) // 2]}
        if cached and state == "cold":
            warm = epochs[1][1]
            metrics["fetch_ms_per_sample"] = 1e3 * (1 / rate.samples_per_s - 1 / warm.samples_per_s)
        trainbench.record(storage=label, metrics=metrics, **common,
                          config={"num_workers": tb_workers, "prefetch_factor": lcfg.prefetch_factor,
                                  "samples": rate.samples, "bytes_per_sample": bps, "cache": state if cached else None})
        assert rate.samples_per_s > 0 and math.isfinite(rate.mb_per_s)


def test_training_storage(trainbench, tb_workload, tb_storage, tb_workers):
    for rec in _train_with_differential(trainbench, tb_workload, tb_storage, tb_workers):
        m = rec.metrics
        assert 0.0 <= m["stall_ratio"] <= 1.0
        assert math.isfinite(m["loss_last"]), "training diverged (loss is inf/NaN)"


def _train_with_differential(trainbench, workload, storage, workers, **overrides):
    """Training records from `storage` (cold and warm for +cache), each with the differential
    stall against the same batches pre-loaded in device memory as its headline stall_ratio."""
    s = trainbench.session
    batch, count = _sizes(trainbench, workload)
    count = max(count, batch * (overrides.get("steps", s.steps) + overrides.get("warmup", s.warmup)))
    cached = storage.cached
    recs = [trainbench.train(workload, storage=storage, num_workers=workers, **overrides)]
    if cached:  # same data set, cache kept: every shard is local now
        recs.append(trainbench.train(workload, storage=storage, num_workers=workers,
                                     extra={"cold_cache": False}, feed_benchmark_stats=False, **overrides))
        recs[0].storage, recs[1].storage = f"{storage}[cold]", f"{storage}[warm]"

    # the differential method: the same model on batches already in device memory
    cfg = trainbench.config(workload, storage=storage, num_workers=workers, extra={"cold_cache": False}, **overrides)
    device = resolve_device(cfg.device)
    source = storage_loader(storage, workload, s.size, count, s.seed, loader_config(cfg, batch, device),
                            cold_cache=False)
    batches = preloaded_batches(source, min(PRELOADED, count // batch), device)
    pre = run(cfg, loader=batches)
    del batches
    if device.type == "cuda":
        torch.cuda.empty_cache()
    for rec in recs:
        m = rec.metrics
        apply_differential(m, pre.metrics["samples_per_s"])  # the headline stall_ratio; stall_in_loop kept
        m["stall_ratio_preloaded"] = pre.metrics["stall_ratio"]
        rec.config["storage_bench"] = True
        rec.config["threads"] = thread_settings(workers)
        rec.config["stall_note"] = explain_disagreement(m, rec.config)
    if cached:  # the split of the headline stall: what the cache removed was I/O
        cold, warm = recs[0].metrics, recs[1].metrics
        cold["stall_fetch"] = max(0.0, cold["stall_ratio"] - warm["stall_ratio"])  # I/O
        cold["stall_prep"] = warm["stall_ratio"]  # decode + augment (+ local reads)
    return recs


IOPS = (150, 300, 500)  # throttle:1000,K: a disk bound by K reads/s, far from its MB/s limit
@pytest.mark.iops
@pytest.mark.parametrize("iops", IOPS)
@pytest.mark.parametrize("workload", ["resnet50", "bert-base"])
def test_stall_agrees_with_the_disk(trainbench, request, workload, iops):
    """With a disk that serves K samples/s, an input-bound run loses 1 - K/pre-loaded of its
    throughput to input: the headline stall must say so (select with `-m iops`)."""
    if "iops" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the IOPS agreement sweep runs with -m iops (about 45 s on 2 cores)")
    spec = parse_storage(f"throttle:1000,{iops}")
    (rec,) = _train_with_differential(trainbench, workload, spec, trainbench.session.loader.get("num_workers") or 1,
                                      steps=40, warmup=5)
    m = rec.metrics
    expected = max(0.0, 1 - iops / m["samples_per_s_preloaded"])
    gap = abs(m["stall_ratio"] - expected)
    rec.config["iops_check"] = {"iops": iops, "expected_stall": expected, "gap": gap,
                                "disk_reached": m["samples_per_s"] / iops}
    if gap > 0.05 or m["samples_per_s"] < 0.9 * iops:
        warnings.warn(f"{workload} at {iops} ops/s: headline stall {m['stall_ratio']:.3f} vs expected {expected:.3f}, "
                      f"disk reached {m['samples_per_s'] / iops:.0%} (a busy machine moves both)")
