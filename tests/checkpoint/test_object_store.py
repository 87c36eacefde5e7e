"""The object-store checkpoint protocol on fsspec's in-memory filesystem (the S3 path with the
network taken out; tests/checkpoint/test_checkpoint_s3.py runs it against moto): publish order,
keep-K, and truncated / bad-checksum / foreign objects skipped by name."""

import io
import json
import uuid

import fsspec
import torch

from trainbench.checkpoint.object_store import ObjectCheckpointStore


def _store(keep=2):
    warnings = []
    fs = fsspec.filesystem("memory")
    url = f"s3://bucket/{uuid.uuid4().hex[:8]}"
    return ObjectCheckpointStore(url, fs, keep=keep, warn=warnings.append), fs, warnings


def _payload(step):
    return {"step": step, "w": torch.full((4,), float(step))}


def test_publish_keeps_k_and_latest_names_a_verified_object():
    store, fs, _ = _store(keep=2)
    for step in (1, 2, 3):
        store.save(step, _payload(step))
    assert [k.rsplit("/", 1)[-1] for k in store.checkpoints()] == ["step-00000003.pt", "step-00000002.pt"]
    pointer = store.pointer()
    assert pointer["file"] == "step-00000003.pt" and pointer["bytes"] == fs.info(f"{store.root}/step-00000003.pt")["size"]
    assert not fs.exists(f"{store.root}/.tmp") or not fs.ls(f"{store.root}/.tmp")
    assert store.latest_valid().step == 3


def test_truncated_bad_checksum_and_foreign_objects_are_skipped_by_name():
    store, fs, warnings = _store(keep=5)
    for step in (1, 2, 3, 4):
        store.save(step, _payload(step))
    four = f"{store.root}/step-00000004.pt"
    fs.pipe_file(four, fs.cat_file(four)[:100])  # truncated
    buf = io.BytesIO()
    doc = torch.load(io.BytesIO(fs.cat_file(f"{store.root}/step-00000003.pt")), weights_only=True)
    doc["checksum"] = "0" * 64  # bad checksum
    torch.save(doc, buf)
    fs.pipe_file(f"{store.root}/step-00000003.pt", buf.getvalue())
    fs.pipe_file(f"{store.root}/step-00000002.pt", json.dumps({"schema": "other"}).encode())  # another format
    loaded = store.latest_valid()
    assert loaded.step == 1
    assert [p.rsplit("/", 1)[-1] for p, _ in loaded.skipped] == ["step-00000004.pt", "step-00000003.pt", "step-00000002.pt"]
    assert "truncated" in loaded.skipped[0][1] and "checksum mismatch" in loaded.skipped[1][1]
    assert all(store.directory in w for w in warnings) and len(warnings) == 3


def test_prune_never_deletes_the_object_latest_names():
    store, fs, _ = _store(keep=1)
    store.save(5, _payload(5))
    store.save(3, _payload(3))  # a lower step published later: latest names it, keep-K must not delete it
    assert store.pointer()["file"] == "step-00000003.pt"
    assert fs.exists(f"{store.root}/step-00000003.pt")
