"""Checkpoint-resume correctness per workload and precision, with the checkpoint costs.

    pytest bench/test_resume.py                       # tiny models on a CPU: bitwise equality
    pytest bench/test_resume.py --gpu=h100-sxm --precision=fp32,bf16

One uninterrupted reference run, and the same run stopped twice in fresh processes: SIGTERM
at step k1 (graceful: finish the step, checkpoint, exit 75), then SIGKILL at step k2 (hard:
the next start resumes from the last periodic checkpoint and replays the steps after it), then
resumed to the end. Per-step losses, the samples each step consumed, and the final parameters
+ optimizer state are compared: bitwise on CPU and GPU alike (deterministic mode; one thread on
CPU): a per-precision tolerance would let a lost or repeated optimizer step pass. The record (kind
"resume") carries ckpt_bytes, ckpt_save_s, ckpt_load_s (median per checkpoint, synchronous
torch.save + fsync) and ckpt_async_save_s (the blocking part of
torch.distributed.checkpoint.async_save; None with the reason where unavailable).
"""

import json
import random
import signal

import pytest
import torch

from trainbench.checkpoint import (
    compare_logs, compare_states, read_checkpoint, read_loss_log,
)
from trainbench.checkpoint.compare import resume_verdict
from trainbench.checkpoint.async_timing import time_async_save
from trainbench.checkpoint.drill import Drill, train
from trainbench.checkpoint.preempt import EXIT_PREEMPTED
from trainbench.workloads import get_workload


def test_resume(trainbench, tb_workload, tb_precision, tb_finetune, tmp_path):
    s = trainbench.session
    if tb_finetune == "lora" and not get_workload(tb_workload).lora_targets:
        pytest.skip(f"--finetune=lora: {tb_workload} has no LoRA targets")
    on_gpu = s.on_gpu
    steps = max(8, min(s.steps, 24))
    batch = s.batch_size or get_workload(tb_workload).default_batch_size(s.size)
    every = max(2, steps // 4)
    common = ["--workload", tb_workload, "--size", s.size, "--precision", tb_precision, "--steps", steps,
              "--batch-size", batch, "--grad-accum", s.grad_accum, "--seed", s.seed, "--device", str(s.device),
              "--dataset-samples", batch * s.grad_accum * max(3, steps // 2 - 1),  # the run crosses epochs
              "--deterministic", "--finetune", tb_finetune] + ([] if on_gpu else ["--threads", "1"])
    ckpt = ["--checkpoint-dir", tmp_path / "ckpt", "--checkpoint-every", every, "--keep", 2,
            "--loss-log", tmp_path / "resumed.jsonl"]
    rng = random.Random(f"{s.seed}-{tb_workload}-{tb_precision}")
    k1 = rng.randint(1, steps // 2)
    k2 = rng.randint(k1 + 1, steps - 1)

    rc, err = train([*common, "--save-final", tmp_path / "ref.pt", "--loss-log", tmp_path / "ref.jsonl"], tmp_path)
    if rc == 2 and "precision" in err.lower():
        trainbench.record(kind="resume", workload=tb_workload, size=s.size, precision=tb_precision,
                          batch_size=batch, status="skipped", message=err.strip().splitlines()[-1])
        pytest.skip(err.strip().splitlines()[-1])
    assert rc == 0, err

    graceful = Drill.start([*common, *ckpt], tmp_path, hold_at=k1)
    graceful.wait_for(f"held at step {k1}")
    graceful.signal(signal.SIGTERM)
    assert graceful.finish() == EXIT_PREEMPTED, graceful.stderr

    hard = Drill.start([*common, *ckpt, "--resume", "auto"], tmp_path, hold_at=k2)
    hard.wait_for(f"held at step {k2}")
    hard.signal(signal.SIGKILL)
    assert hard.finish() == -signal.SIGKILL

    rc, err = train([*common, *ckpt, "--resume", "auto", "--save-final", tmp_path / "resumed.pt",
                     "--summary-json", tmp_path / "summary.json"], tmp_path)
    assert rc == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text())
    ref = torch.load(tmp_path / "ref.pt", weights_only=True)
    got = torch.load(tmp_path / "resumed.pt", weights_only=True)
    states = compare_states(ref, got)
    logs = compare_logs(read_loss_log(tmp_path / "ref.jsonl"), read_loss_log(tmp_path / "resumed.jsonl"))

    last = read_checkpoint(summary["saves"][-1]["path"])["payload"]
    state = {"model": last["model"], "optimizer": last["optimizer"]}
    time_async_save(state, tmp_path / "dcp-warmup")  # first call builds the thread pool and planner
    timing = time_async_save(state, tmp_path / "dcp")
    # the drill runs --deterministic on CPU and GPU alike: bitwise, or a lost step would pass
    ok, criterion = resume_verdict(states, logs, ref, got, tb_precision, deterministic=True)
    rec = trainbench.record(
        kind="resume", workload=tb_workload, size=s.size, precision=tb_precision, batch_size=batch,
        status="passed" if ok else "failed",
        message=None if ok else f"resumed run differs: {states} {logs}",
        metrics={
            "ckpt_bytes": summary["ckpt_bytes"],
            "ckpt_save_s": summary["ckpt_save_s"],
            "ckpt_load_s": summary["ckpt_load_s"],
            "ckpt_async_save_s": timing["blocking_s"],
            "ckpt_async_total_s": timing["total_s"],
            "resume_max_abs_diff": states["max_abs_diff"],
            "resume_max_rel_diff": states["max_rel_diff"],
        },
        config={"steps": steps, "checkpoint_every": every, "sigterm_step": k1, "sigkill_step": k2, "finetune": tb_finetune,
                "resumed_from_step": summary["start_step"], "criterion": criterion,
                "bitwise_equal": states["bitwise_equal"], "loss_bitwise_equal": logs["loss_bitwise_equal"],
                "data_equal": logs["data_equal"], "async_save_note": timing["note"]},
    )
    assert ok, rec.message

