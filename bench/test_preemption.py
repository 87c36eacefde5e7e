"""Goodput under preemption (kind `goodput`): `trainbench train` run to the end through K seeded
interruptions (SIGTERM with grace, SIGKILL without), with checkpoints on the local disk and in
S3 (the session's moto server, or --s3-endpoint). Records restart-to-first-step, lost steps,
checkpoint save/load seconds per store, and goodput = useful step time / wall time with its
spread over trials; `trainbench select --spot` then uses these instead of its assumptions.

    pytest bench/ -k preemption                # CPU: tiny gpt-small, 2 interruptions x 3 trials
"""

import random
import statistics

import pytest

from trainbench.checkpoint.goodput import run_trial
from trainbench.data import storage_context

pytestmark = pytest.mark.drill  # left out of a plain `pytest bench/`: --drills runs it

INTERRUPTIONS = 2
TRIALS = 3
STEPS = 12


@pytest.mark.parametrize("store", ["local", "s3"])
def test_preemption(trainbench, trainbench_session, store, tmp_path):
    s = trainbench_session
    args = ["--workload", "gpt-small", "--size", s.size, "--steps", STEPS, "--checkpoint-every", 3,
            "--seed", s.seed, "--device", str(s.device), "--threads", 1]
    env = {}
    if store == "s3":
        target = storage_context().s3_target()  # starts moto for the session unless --s3-endpoint
        if target.endpoint:
            args += ["--s3-endpoint", target.endpoint]
        env = {"AWS_ACCESS_KEY_ID": target.credentials.get("key", ""),
               "AWS_SECRET_ACCESS_KEY": target.credentials.get("secret", ""),
               "AWS_DEFAULT_REGION": target.region or "us-east-1"} if target.credentials else {}
    rng = random.Random(s.seed)
    trials = []
    for t in range(TRIALS):
        where = (f"s3://{target.bucket}/preemption/{tmp_path.name}/{t}" if store == "s3"
                 else str(tmp_path / f"ckpt-{t}"))
        trials.append(run_trial([*args, "--checkpoint-dir", where], STEPS, INTERRUPTIONS, rng,
                                tmp_path / f"trial-{t}", env=env))
    goodput = sorted(tr.goodput for tr in trials)
    flat = lambda key: [x for tr in trials for x in getattr(tr, key)]  # noqa: E731
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
    rec = trainbench.record(
        kind="goodput", workload="gpt-small", size=s.size, storage=store,
        metrics={
            "goodput": med(goodput), "goodput_min": goodput[0], "goodput_max": goodput[-1],
            "restart_to_first_step_s": med(flat("restart_to_first_step_s")),
            "lost_steps_mean": statistics.fmean(flat("lost_steps")),
            "ckpt_save_s": med(flat("save_s")), "ckpt_load_s": med(flat("load_s")),
            "wall_s_median": med([tr.wall_s for tr in trials]),
        },
        config={"steps": STEPS, "interruptions": INTERRUPTIONS, "trials": TRIALS, "checkpoint_every": 3,
                "signals": [tr.signals for tr in trials], "store": store,
                "restart_to_first_step_s": flat("restart_to_first_step_s"), "lost_steps": flat("lost_steps"),
                "goodput_per_trial": [tr.goodput for tr in trials],
                "note": "restart = process start to first step (imports, checkpoint load); VM provisioning excluded"},
    )
    assert 0 < rec.metrics["goodput"] < 1
    assert flat("restart_to_first_step_s"), "no restart was measured"
