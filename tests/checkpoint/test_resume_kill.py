"""Kill drills on real processes: `python -m trainbench.cli train` stopped by real SIGTERM / SIGKILL
and resumed in a fresh process with --resume auto must end bitwise equal to the uninterrupted
run (CPU, deterministic mode, one thread), having consumed exactly the same samples."""

import json
import random
import signal
import tempfile
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings, strategies as st

from trainbench.checkpoint import compare_logs, compare_states, read_checkpoint, read_loss_log
from trainbench.checkpoint.drill import Drill, train
from trainbench.checkpoint.preempt import EXIT_PREEMPTED
from trainbench.checkpoint.store import PAUSE_ENV
from trainbench.workloads import get_workload

STEPS = 8


def _common(workload: str, workers: int = 0, seed: int = 3) -> list:
    batch = {"gpt-small": 4, "bert-base": 8, "resnet50": 8}[workload]
    # 3 steps per epoch: kills land mid-epoch and runs cross epoch boundaries
    return ["--workload", workload, "--steps", STEPS, "--batch-size", batch, "--dataset-samples", 3 * batch + 1,
            "--num-workers", workers, "--seed", seed, "--deterministic", "--threads", 1, "--device", "cpu"]


_REFERENCES: dict = {}


def _reference(workload: str) -> tuple[dict, list]:
    """The uninterrupted run: final state and loss log (computed once per workload)."""
    if workload not in _REFERENCES:
        d = Path(tempfile.mkdtemp(prefix=f"tb-ref-{workload}-"))
        rc, err = train([*_common(workload), "--save-final", d / "final.pt", "--loss-log", d / "log.jsonl"], d)
        assert rc == 0, err
        _REFERENCES[workload] = (torch.load(d / "final.pt", weights_only=True), read_loss_log(d / "log.jsonl"))
    return _REFERENCES[workload]


def _assert_same_as_reference(workload: str, final: Path, log: Path, context: str) -> None:
    ref_state, ref_log = _reference(workload)
    states = compare_states(ref_state, torch.load(final, weights_only=True))
    logs = compare_logs(ref_log, read_loss_log(log))
    assert logs["steps"] == STEPS
    assert logs["data_equal"], f"{context}: data differs from step {logs['first_data_mismatch_step']}"
    assert logs["loss_bitwise_equal"], f"{context}: losses differ by up to {logs['loss_max_abs_diff']}"
    assert states["bitwise_equal"], f"{context}: final state differs: {states}"


def _log_lines(path: Path) -> int:
    return path.read_text().count("\n")


@pytest.mark.parametrize("workload", ["gpt-small", "bert-base", "resnet50"])
def test_sigterm_then_sigkill_at_random_steps_with_workers(workload, tmp_path):
    """Must-show 1: signals at unplanned moments (polling the loss log, no hook), 2 workers."""
    rng = random.Random()
    k1 = rng.randint(1, 3)
    args = [*_common(workload, workers=2), "--checkpoint-dir", tmp_path / "ckpt", "--checkpoint-every", 2,
            "--loss-log", tmp_path / "log.jsonl"]
    d = Drill.start(args, tmp_path)
    d.wait_for_log_steps(tmp_path / "log.jsonl", k1)
    d.signal(signal.SIGTERM)
    assert d.finish() == EXIT_PREEMPTED, d.stderr
    stopped = _log_lines(tmp_path / "log.jsonl")  # the step in flight finished, then it saved
    assert f"preempted (SIGTERM) after step {stopped}" in d.stderr

    # at least 3 steps left after k2, so the kill lands before the run can finish
    k2 = rng.randint(stopped + 1, STEPS - 3) if stopped + 1 <= STEPS - 3 else None
    if k2 is not None:
        d = Drill.start([*args, "--resume", "auto"], tmp_path)
        d.wait_for_log_steps(tmp_path / "log.jsonl", k2)
        d.signal(signal.SIGKILL)
        assert d.finish() == -signal.SIGKILL, f"the run ended before SIGKILL landed (after step {k2}):\n{d.stderr}"

    rc, err = train([*args, "--resume", "auto", "--save-final", tmp_path / "final.pt"], tmp_path)
    assert rc == 0, err
    assert "resumed from" in err
    _assert_same_as_reference(workload, tmp_path / "final.pt", tmp_path / "log.jsonl",
                              f"SIGTERM after step {k1}, SIGKILL after step {k2}")


@settings(max_examples=6, deadline=None)
@given(kill_step=st.integers(1, STEPS - 1), every=st.integers(1, 4), workers=st.sampled_from([0, 2]),
       sig=st.sampled_from([signal.SIGTERM, signal.SIGKILL]))
def test_no_kill_step_interval_or_worker_count_breaks_resume(kill_step, every, workers, sig):
    """Must-show 2: exact kill steps (the hold hook pins the child between steps)."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        args = [*_common("gpt-small", workers), "--checkpoint-dir", tmp / "ckpt", "--checkpoint-every", every,
                "--loss-log", tmp / "log.jsonl"]
        d = Drill.start(args, tmp, hold_at=kill_step)
        d.wait_for(f"held at step {kill_step}")
        d.signal(sig)
        assert d.finish() == (EXIT_PREEMPTED if sig == signal.SIGTERM else -sig), d.stderr
        rc, err = train([*args, "--resume", "auto", "--save-final", tmp / "final.pt"], tmp)
        assert rc == 0, err
        expect = kill_step if sig == signal.SIGTERM else kill_step - kill_step % every
        if expect:
            assert f"step-{expect:08d}.pt (step {expect}," in err, err
        else:
            assert "no valid checkpoint" in err, err
        _assert_same_as_reference("gpt-small", tmp / "final.pt", tmp / "log.jsonl",
                                  f"{sig.name} at step {kill_step}, every {every}, {workers} workers")


def test_sigkill_during_a_save_leaves_the_pointer_on_a_valid_checkpoint(tmp_path):
    """Must-show 3: the save of step 4 is paused after its bytes are written, then SIGKILL."""
    ckpt = tmp_path / "ckpt"
    args = [*_common("gpt-small"), "--checkpoint-dir", ckpt, "--checkpoint-every", 2, "--loss-log", tmp_path / "log.jsonl"]
    d = Drill.start(args, tmp_path, env={PAUSE_ENV: "4:60"})
    d.wait_for("pausing")
    d.signal(signal.SIGKILL)
    assert d.finish() == -signal.SIGKILL
    assert list(ckpt.glob(".step-00000004.pt.*.tmp")), "the interrupted write should have left its temp file"
    assert not (ckpt / "step-00000004.pt").exists()
    pointer = json.loads((ckpt / "latest").read_text())
    assert pointer["file"] == "step-00000002.pt"
    assert read_checkpoint(ckpt / pointer["file"])["checksum"] == pointer["checksum"]

    rc, err = train([*args, "--resume", "auto", "--save-final", tmp_path / "final.pt"], tmp_path)
    assert rc == 0, err
    assert f"resumed from {ckpt / 'step-00000002.pt'} (step 2" in err
    assert not list(ckpt.glob(".*.tmp"))
    _assert_same_as_reference("gpt-small", tmp_path / "final.pt", tmp_path / "log.jsonl", "SIGKILL during save")


def test_corrupt_newest_checkpoint_falls_back_and_says_so(tmp_path):
    ckpt = tmp_path / "ckpt"
    args = [*_common("gpt-small"), "--checkpoint-dir", ckpt, "--checkpoint-every", 2, "--loss-log", tmp_path / "log.jsonl"]
    d = Drill.start(args, tmp_path, hold_at=4)
    d.wait_for("held at step 4")
    d.signal(signal.SIGTERM)
    assert d.finish() == EXIT_PREEMPTED
    newest = ckpt / "step-00000004.pt"
    newest.write_bytes(newest.read_bytes()[:1000])  # truncated, as by a disk that lost the tail
    rc, err = train([*args, "--resume", "auto", "--save-final", tmp_path / "final.pt"], tmp_path)
    assert rc == 0, err
    assert f"warning: skipping checkpoint {newest}" in err and "falling back" in err
    assert f"resumed from {ckpt / 'step-00000002.pt'} (step 2" in err and "skipped newer: step-00000004.pt" in err
    _assert_same_as_reference("gpt-small", tmp_path / "final.pt", tmp_path / "log.jsonl", "corrupt newest")


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_malicious_checkpoint_stops_the_cli_and_runs_nothing(tmp_path):
    """Must-show 4 through the command line: exit 2, a message saying why, no side effect."""
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    marker = tmp_path / "PWNED"
    torch.save({"format": "trainbench-checkpoint/1", "step": 6, "payload": _Evil(marker)}, ckpt / "step-00000006.pt")
    rc, err = train([*_common("gpt-small"), "--checkpoint-dir", ckpt, "--resume", "auto"], tmp_path)
    assert rc == 2, err
    assert "refused to load checkpoint" in err and "step-00000006.pt" in err and "nothing in the file was executed" in err
    assert "Traceback" not in err
    assert not marker.exists()


def test_unwritable_checkpoint_dir_fails_before_training(tmp_path):
    """Must-show 5 through the command line (a path that cannot be a directory)."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    rc, err = train([*_common("gpt-small"), "--checkpoint-dir", blocker / "ckpt", "--loss-log", tmp_path / "log.jsonl"],
                    tmp_path)
    assert rc == 2, err
    assert "cannot write to --checkpoint-dir" in err and "Traceback" not in err
    assert not (tmp_path / "log.jsonl").exists()  # no step ran


def test_resume_with_different_settings_is_refused(tmp_path):
    ckpt = tmp_path / "ckpt"
    d = Drill.start([*_common("gpt-small"), "--checkpoint-dir", ckpt], tmp_path, hold_at=1)
    d.wait_for("held at step 1")
    d.signal(signal.SIGTERM)
    assert d.finish() == EXIT_PREEMPTED
    rc, err = train([*_common("gpt-small", seed=4), "--checkpoint-dir", ckpt, "--resume", "auto"], tmp_path)
    assert rc == 2, err
    assert "belongs to a different run (seed: checkpoint 3, now 4)" in err
