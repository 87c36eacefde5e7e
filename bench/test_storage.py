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

import torch

from trainbench.data import storage_loader
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
    s = trainbench.session
    batch, count = _sizes(trainbench, tb_workload)
    cached = tb_storage.cached
    recs = [trainbench.train(tb_workload, storage=tb_storage, num_workers=tb_workers)]
    if cached:  # same data set, cache kept: every shard is local now
        recs.append(trainbench.train(tb_workload, storage=tb_storage, num_workers=tb_workers,
                                     extra={"cold_cache": False}, feed_benchmark_stats=False))
        recs[0].storage, recs[1].storage = f"{tb_storage}[cold]", f"{tb_storage}[warm]"
        cold, warm = recs[0].metrics, recs[1].metrics
        cold["stall_fetch"] = max(0.0, cold["stall_ratio"] - warm["stall_ratio"])  # I/O
        cold["stall_prep"] = warm["stall_ratio"]  # decode + augment (+ local reads)

    # the differential method: the same model on batches already in device memory
    cfg = trainbench.config(tb_workload, storage=tb_storage, num_workers=tb_workers, extra={"cold_cache": False})
    device = resolve_device(cfg.device)
    source = storage_loader(tb_storage, tb_workload, s.size, count, s.seed, loader_config(cfg, batch, device),
                            cold_cache=False)
    batches = preloaded_batches(source, min(PRELOADED, count // batch), device)
    pre = run(cfg, loader=batches)
    del batches
    if device.type == "cuda":
        torch.cuda.empty_cache()
    for rec in recs:
        m = rec.metrics
        m["samples_per_s_preloaded"] = pre.metrics["samples_per_s"]
        m["stall_differential"] = max(0.0, 1.0 - m["samples_per_s"] / pre.metrics["samples_per_s"])
        m["stall_ratio_preloaded"] = pre.metrics["stall_ratio"]
        rec.config["storage_bench"] = True
        assert 0.0 <= m["stall_ratio"] <= 1.0
        assert math.isfinite(m["loss_last"]), "training diverged (loss is inf/NaN)"
