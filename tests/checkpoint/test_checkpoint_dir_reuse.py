"""A used checkpoint directory is never a trap: a fresh run refuses it (or --overwrite starts
clean), `latest` always names a valid checkpoint, and a resume with other flags says what the
checkpoint really holds."""

import json
import random
import signal
import time

from trainbench.checkpoint.drill import Drill, train
from trainbench.checkpoint.store import CheckpointStore, read_checkpoint

ARGS = ["--workload", "gpt-small", "--batch-size", 2, "--threads", 1, "--device", "cpu", "--seed", 1]


def _latest_is_valid(ckpt) -> int:
    pointer = json.loads((ckpt / "latest").read_text())
    doc = read_checkpoint(ckpt / pointer["file"])
    assert doc["step"] == pointer["step"] and doc["checksum"] == pointer["checksum"]
    return pointer["step"]


def test_rerun_without_resume_is_refused_and_overwrite_starts_clean(tmp_path):
    ckpt = tmp_path / "ckpt"
    rc, err = train([*ARGS, "--steps", 10, "--checkpoint-dir", ckpt, "--checkpoint-every", 5], tmp_path)
    assert rc == 0, err
    rc, err = train([*ARGS, "--steps", 6, "--checkpoint-dir", ckpt, "--checkpoint-every", 2, "--keep", 2], tmp_path)
    lines = [l for l in err.splitlines() if l.strip()]
    assert rc == 2 and len(lines) == 1, err
    assert "--resume auto" in lines[0] and "--overwrite" in lines[0] and str(ckpt) in lines[0]
    rc, err = train([*ARGS, "--steps", 6, "--checkpoint-dir", ckpt, "--checkpoint-every", 2, "--keep", 2,
                     "--overwrite"], tmp_path)
    assert rc == 0, err
    assert sorted(p.name for p in ckpt.glob("step-*.pt")) == ["step-00000004.pt", "step-00000006.pt"]
    assert _latest_is_valid(ckpt) == 6


def test_config_mismatch_shows_the_real_values(tmp_path):
    ckpt = tmp_path / "ckpt"
    common = ["--workload", "gpt-small", "--threads", 1, "--device", "cpu", "--steps", 2, "--checkpoint-dir", ckpt]
    assert train(common, tmp_path)[0] == 0  # default batch (8 for gpt-small tiny)
    rc, err = train([*common, "--batch-size", 4, "--resume", "auto"], tmp_path)
    assert rc == 2 and "batch_size: checkpoint 8, now 4" in err, err


def test_sigkill_during_keep_k_deletion_leaves_latest_valid(tmp_path):
    """Kill while an old checkpoint is being deleted (unlink slowed by a sitecustomize shim, at a
    seeded deletion): `latest` must still name an existing, valid file; a resume finishes."""
    ckpt = tmp_path / "ckpt"
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        "import pathlib, sys, time\n_unlink = pathlib.Path.unlink\n"
        "def unlink(self, *a, **k):\n"
        "    if self.name.startswith('step-'):\n"
        "        print(f'deleting {self.name}', file=sys.stderr, flush=True)\n        time.sleep(0.5)\n"
        "    return _unlink(self, *a, **k)\n"
        "pathlib.Path.unlink = unlink\n")
    nth = random.Random(16).randint(1, 3)  # which deletion the kill lands in
    args = [*ARGS, "--steps", 6, "--checkpoint-dir", ckpt, "--checkpoint-every", 1, "--keep", 2]
    d = Drill.start(args, tmp_path, env={"PYTHONPATH": str(shim)})
    while d.stderr.count("deleting step-") < nth:
        d.wait_for("deleting step-")
        time.sleep(0.02)
    d.signal(signal.SIGKILL)
    assert d.finish() == -signal.SIGKILL
    step = _latest_is_valid(ckpt)
    assert CheckpointStore(ckpt).latest_valid().step == step
    rc, err = train([*args, "--resume", "auto"], tmp_path)
    assert rc == 0 and f"resumed from {ckpt}" in err, err
    assert _latest_is_valid(ckpt) == 6
