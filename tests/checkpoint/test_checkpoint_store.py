"""The checkpoint directory: atomic saves, checksums, discovery of the latest valid file,
keep-K, weights_only refusal of code, and clear errors when the disk will not take a save."""

import errno
import json
import os
import pickle

import pytest
import torch
from hypothesis import given, settings, strategies as st

from trainbench.checkpoint import (
    CheckpointRefused,
    CheckpointStore,
    CheckpointWriteError,
    read_checkpoint,
)
from trainbench.checkpoint import store as store_module
from trainbench.checkpoint.checksum import payload_checksum
from trainbench.checkpoint.rng import rng_state, set_rng_state


def _payload(step: int) -> dict:
    g = torch.Generator().manual_seed(step)
    return {
        "step": step,
        "model": {"w": torch.randn(4, 3, generator=g), "b": torch.zeros(3, dtype=torch.bfloat16)},
        "optimizer": {"state": {0: {"step": torch.tensor(float(step)), "exp_avg": torch.randn(4, 3, generator=g)}},
                      "param_groups": [{"lr": 0.1, "betas": (0.9, 0.95), "params": [0]}]},
        "scaler": None,
        "rng": rng_state(),
    }


def _store(tmp_path, keep=3, warnings=None):
    return CheckpointStore(tmp_path / "ckpt", keep=keep, warn=(warnings.append if warnings is not None else None))


def test_roundtrip_with_weights_only_and_pointer(tmp_path):
    store = _store(tmp_path)
    saved = store.save(5, _payload(5))
    assert saved.path.name == "step-00000005.pt" and saved.bytes == saved.path.stat().st_size > 0
    # an ordinary torch file: weights_only=True loads it without trainbench
    doc = torch.load(saved.path, weights_only=True)
    assert doc["checksum"] == payload_checksum(doc["payload"]) == saved.checksum
    loaded = store.latest_valid()
    assert loaded.step == 5 and loaded.skipped == []
    assert torch.equal(loaded.payload["model"]["w"], _payload(5)["model"]["w"])
    assert loaded.payload["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.95)
    assert json.loads((store.directory / "latest").read_text())["file"] == "step-00000005.pt"
    assert not list(store.directory.glob("*.tmp"))


def test_keeps_the_last_k(tmp_path):
    store = _store(tmp_path, keep=2)
    for step in (2, 4, 6, 8):
        store.save(step, _payload(step))
    assert [p.name for p in store.checkpoints()] == ["step-00000008.pt", "step-00000006.pt"]


@pytest.mark.parametrize("damage", ["truncate", "flip_tensor_byte", "garbage", "empty"])
def test_broken_newest_is_skipped_with_a_warning_naming_it(tmp_path, damage):
    warned = []
    store = _store(tmp_path, warnings=warned)
    store.save(2, _payload(2))
    newest = store.save(4, _payload(4)).path
    raw = newest.read_bytes()
    if damage == "truncate":
        newest.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip_tensor_byte":
        # rewrite with a changed tensor but the old checksum: the zip is valid, the data is not
        doc = torch.load(newest, weights_only=True)
        doc["payload"]["model"]["w"][1, 1] += 1e-3
        torch.save(doc, newest)
    elif damage == "garbage":
        newest.write_bytes(b"\x00" * 100)
    else:
        newest.write_bytes(b"")
    loaded = store.latest_valid()
    assert loaded.step == 2
    assert [p.name for p, _ in loaded.skipped] == ["step-00000004.pt"]
    assert len(warned) == 1 and "step-00000004.pt" in warned[0] and "falling back" in warned[0]
    if damage == "flip_tensor_byte":
        assert "checksum mismatch" in warned[0]


def test_no_valid_checkpoint_is_none(tmp_path):
    store = _store(tmp_path, warnings=[])
    assert store.latest_valid() is None
    store.directory.mkdir(parents=True)
    (store.directory / "step-00000001.pt").write_bytes(b"PK\x03\x04 half a zip")
    assert store.latest_valid() is None


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("how", ["torch.save", "pickle protocol 2"])
def test_malicious_pickle_is_refused_and_nothing_runs(tmp_path, how):
    store = _store(tmp_path, warnings=[])
    store.save(2, _payload(2))
    marker = tmp_path / "PWNED"
    evil = store.directory / "step-00000009.pt"
    doc = {"format": store_module.FORMAT, "step": 9, "checksum": "x", "payload": _Evil(marker)}
    if how == "torch.save":
        torch.save(doc, evil)
    else:
        evil.write_bytes(pickle.dumps(doc, protocol=2))
    with pytest.raises(CheckpointRefused) as info:
        store.latest_valid()
    msg = str(info.value)
    assert "step-00000009.pt" in msg and "system" in msg
    assert "weights_only=True" in msg and "nothing in the file was executed" in msg
    assert not marker.exists()


def _fake_full_disk(doc, f):
    f.write(b"PK\x03\x04" + b"\x00" * 4096)  # some bytes land, then the disk is full
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_full_disk_is_a_clear_error_and_the_previous_checkpoint_survives(tmp_path, monkeypatch):
    store = _store(tmp_path)
    good = store.save(2, _payload(2))
    before = good.path.read_bytes()
    monkeypatch.setattr(store_module, "_serialize", _fake_full_disk)
    with pytest.raises(CheckpointWriteError) as info:
        store.save(4, _payload(4))
    msg = str(info.value)
    assert "No space left on device" in msg and "ENOSPC" in msg and str(store.directory) in msg
    assert "step-00000002.pt is intact" in msg and "free disk space" in msg
    assert good.path.read_bytes() == before
    assert [p.name for p in store.checkpoints()] == ["step-00000002.pt"]
    assert not list(store.directory.glob(".*.tmp"))  # the partial temp file was removed
    assert json.loads((store.directory / "latest").read_text())["step"] == 2
    monkeypatch.undo()
    assert store.latest_valid().step == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories anyway")
def test_read_only_directory_is_a_clear_error(tmp_path):
    store = _store(tmp_path)
    good = store.save(2, _payload(2))
    store.directory.chmod(0o555)
    try:
        with pytest.raises(CheckpointWriteError, match="Permission denied.*writable.*step-00000002.pt is intact"):
            store.save(4, _payload(4))
        with pytest.raises(CheckpointWriteError):
            store.check_writable()
    finally:
        store.directory.chmod(0o755)
    assert store.latest_valid().step == 2 and good.path.exists()


def test_permission_denied_is_a_clear_error(tmp_path, monkeypatch):
    """The read-only case as root sees it: the temp file cannot be created (EACCES)."""
    store = _store(tmp_path)
    store.save(2, _payload(2))

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr("trainbench.records.atomic.tempfile.mkstemp", denied)
    with pytest.raises(CheckpointWriteError, match="Permission denied.*EACCES.*writable.*step-00000002.pt is intact"):
        store.save(4, _payload(4))
    monkeypatch.undo()
    assert store.latest_valid().step == 2


def test_directory_that_is_a_file_fails_before_training(tmp_path):
    (tmp_path / "ckpt").write_text("not a directory")
    with pytest.raises(CheckpointWriteError, match="--checkpoint-dir .*ckpt"):
        CheckpointStore(tmp_path / "ckpt").check_writable()


def test_stale_temp_files_from_a_killed_save_are_removed_by_the_next(tmp_path):
    store = _store(tmp_path)
    store.directory.mkdir(parents=True)
    (store.directory / ".step-00000004.pt.abc123.tmp").write_bytes(b"half")
    store.save(6, _payload(6))
    assert not list(store.directory.glob(".*.tmp"))


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_checksum_sees_any_single_byte_change(data):
    payload = _payload(3)
    before = payload_checksum(payload)
    t = data.draw(st.sampled_from([payload["model"]["w"], payload["model"]["b"],
                                   payload["optimizer"]["state"][0]["exp_avg"], payload["rng"]["torch"]]))
    raw = t.reshape(-1).view(torch.uint8)
    i = data.draw(st.integers(0, raw.numel() - 1))
    raw[i] ^= data.draw(st.integers(1, 255))
    assert payload_checksum(payload) != before


def test_checksum_sees_plain_values_and_structure():
    p = _payload(3)
    base = payload_checksum(p)
    assert payload_checksum(_payload(3)) == base
    p["optimizer"]["param_groups"][0]["lr"] = 0.1000000001
    assert payload_checksum(p) != base
    q = _payload(3)
    q["extra"] = None
    assert payload_checksum(q) != base


def test_rng_states_roundtrip_through_weights_only(tmp_path):
    import random

    import numpy as np

    state = rng_state()
    torch.save(state, tmp_path / "rng.pt")
    expected = (random.random(), float(np.random.rand()), torch.rand(3))
    set_rng_state(torch.load(tmp_path / "rng.pt", weights_only=True))
    got = (random.random(), float(np.random.rand()), torch.rand(3))
    assert expected[:2] == got[:2] and torch.equal(expected[2], got[2])
