"""Checkpoints in object storage (moto on a loopback port): a SIGKILL at a seeded byte offset of
a checkpoint upload (the upload slowed by a test hook) never leaves `--resume auto` without a
valid checkpoint, and the resumed run ends bitwise equal to an uninterrupted one (CPU)."""

import random
import signal

import pytest
import torch

from trainbench.checkpoint import compare_states
from trainbench.checkpoint.drill import Drill, train
from trainbench.checkpoint.object_store import CHUNK, SLOW_PUT_ENV, ObjectCheckpointStore
from trainbench.data.s3 import MotoServer, check_reachable, s3_filesystem

ARGS = ["--workload", "gpt-small", "--batch-size", 2, "--steps", 4, "--deterministic", "--threads", 1,
        "--device", "cpu", "--seed", 2, "--checkpoint-every", 2, "--keep", 1]
ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


@pytest.fixture(scope="module")
def moto():
    server = MotoServer()
    target = server.target("ckpt")
    check_reachable(target, create_bucket=True)
    yield server, s3_filesystem(target)
    server.stop()


def test_sigkill_at_seeded_upload_offsets_leaves_a_valid_checkpoint(moto, tmp_path):
    server, fs = moto
    ref = tmp_path / "ref.pt"
    rc, err = train([*ARGS, "--save-final", ref], tmp_path, env=ENV)
    assert rc == 0, err
    rng = random.Random(16)
    for trial in range(3):
        url = f"s3://ckpt/run-{trial}"
        s3 = [*ARGS, "--checkpoint-dir", url, "--s3-endpoint", server.endpoint]
        d = Drill.start(s3, tmp_path, env={**ENV, SLOW_PUT_ENV: "0.01"})
        d.wait_for("checkpoint: put ")  # the first save (step 2) is uploading
        total = int(d.stderr.split("checkpoint: put ", 1)[1].split("/", 1)[1].split()[0])
        offset = min(rng.randint(1, -(-total // CHUNK)) * CHUNK, total)  # a seeded chunk boundary
        second_save = trial > 0  # trial 0 kills the very first upload: nothing may be published yet
        line = f"checkpoint: put {offset}/{total} bytes"
        while d.stderr.count(line) < (2 if second_save else 1):
            d.wait_for(line)
        d.signal(signal.SIGKILL)
        assert d.finish() == -signal.SIGKILL
        store = ObjectCheckpointStore(url, fs, keep=1)
        loaded = store.latest_valid()
        if second_save:
            assert loaded is not None and loaded.step == 2, (offset, total, store.checkpoints())
        pointer = store.pointer()
        if pointer is not None:  # `latest`, when present, names a valid checkpoint
            assert loaded is not None and pointer["file"] == loaded.path.rsplit("/", 1)[-1]
        final = tmp_path / f"final-{trial}.pt"
        rc, err = train([*s3, "--resume", "auto", "--save-final", final], tmp_path, env=ENV)
        assert rc == 0, err
        states = compare_states(torch.load(ref, weights_only=True), torch.load(final, weights_only=True))
        assert states["bitwise_equal"], (trial, offset, states)
        assert store.latest_valid().step == 4 and len(store.checkpoints()) == 1
        assert not fs.ls(f"ckpt/run-{trial}/.tmp", refresh=True) if fs.exists(f"ckpt/run-{trial}/.tmp") else True
