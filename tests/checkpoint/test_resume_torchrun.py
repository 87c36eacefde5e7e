"""Under torchrun (2 CPU ranks, gloo): SIGTERM to the launcher reaches every rank, rank 0
writes one checkpoint with both ranks' RNG and loader state, and a resumed 2-rank run ends
bitwise equal to an uninterrupted one."""

import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from trainbench.checkpoint import compare_logs, compare_states, read_loss_log
from trainbench.checkpoint.drill import _env
from trainbench.checkpoint.resumable import HOLD_ENV

ARGS = ["--workload", "gpt-small", "--steps", "5", "--batch-size", "4", "--dataset-samples", "17",
        "--deterministic", "--threads", "1", "--device", "cpu"]


def _torchrun(args, err_path, env=None):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           "-m", "trainbench.cli", "train", *map(str, args)]
    with open(err_path, "wb") as err:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=_env(env))


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without distributed")
@pytest.mark.skipif(os.environ.get("TRAINBENCH_TORCHRUN_TESTS") != "1",
                    reason="three 2-rank torchrun launches (~45 s on 2 cores): set TRAINBENCH_TORCHRUN_TESTS=1")
def test_two_rank_run_survives_sigterm_to_torchrun(tmp_path):
    ref = _torchrun([*ARGS, "--save-final", tmp_path / "ref.pt", "--loss-log", tmp_path / "ref.jsonl"], tmp_path / "ref.err")
    assert ref.wait(300) == 0, (tmp_path / "ref.err").read_text()

    ckpt = ["--checkpoint-dir", tmp_path / "ckpt", "--checkpoint-every", 2, "--loss-log", tmp_path / "log.jsonl"]
    run = _torchrun([*ARGS, *ckpt], tmp_path / "run.err", env={HOLD_ENV: "3"})
    err = tmp_path / "run.err"
    deadline = time.perf_counter() + 300
    while err.read_text().count("held at step 3") < 2:  # both ranks wait between steps
        assert run.poll() is None and time.perf_counter() < deadline, err.read_text()
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)  # torchrun forwards it to the ranks
    run.wait(120)
    text = err.read_text()
    assert "preempted (SIGTERM) after step 3" in text, text
    assert (tmp_path / "ckpt" / "step-00000003.pt").exists()

    res = _torchrun([*ARGS, *ckpt, "--resume", "auto", "--save-final", tmp_path / "res.pt"], tmp_path / "res.err")
    assert res.wait(300) == 0, (tmp_path / "res.err").read_text()
    assert "resumed from" in (tmp_path / "res.err").read_text()
    states = compare_states(torch.load(tmp_path / "ref.pt", weights_only=True),
                            torch.load(tmp_path / "res.pt", weights_only=True))
    logs = compare_logs(read_loss_log(tmp_path / "ref.jsonl"), read_loss_log(tmp_path / "log.jsonl"))
    assert states["bitwise_equal"] and logs["loss_bitwise_equal"] and logs["data_equal"], (states, logs)
