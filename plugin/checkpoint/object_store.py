"""Checkpoints in object storage (`--checkpoint-dir s3://bucket/prefix`) through fsspec/s3fs.

S3 has no rename, so a save is a publish in four steps, each one safe to be killed in:

    1. PUT  prefix/.tmp/step-00000050.pt.<token>      the bytes, under a temporary key
    2. HEAD + GET it back: size and sha256 must match what was sent (else: error, nothing published)
    3. COPY to prefix/step-00000050.pt, HEAD: size again; DELETE the temporary key
    4. PUT  prefix/latest  {"file", "step", "checksum", "sha256", "bytes"}    -- last
    then keep-K: DELETE the oldest step-*.pt beyond K, never the one `latest` names.

A kill before 3 leaves only a stray temporary key (removed by the next save); a kill between 3
and 4 leaves a complete, verified new checkpoint that discovery finds; `latest` only ever names
an object that was verified before it was written. `--resume auto` walks the checkpoints newest
first exactly as the local store does (read, weights_only load, checksum), skipping bad ones.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import time
import uuid
from typing import Any, Callable

import torch

from .checksum import payload_checksum
from .store import (FORMAT, POINTER, CheckpointCorrupt, CheckpointStore, CheckpointWriteError, LoadedCheckpoint,
                    SavedCheckpoint, _name, read_checkpoint)
from ..errors import InputError

__all__ = ["ObjectCheckpointStore", "open_store", "SLOW_PUT_ENV"]

_NAME = re.compile(r"^step-(\d{8,})\.pt$")
CHUNK = 1 << 16  # bytes per write call into the upload
# Test hook (kill-during-upload tests): "SECONDS" sleeps after every CHUNK written to the
# temporary key and prints "checkpoint: put N/M bytes", so a test can kill at a byte offset.
SLOW_PUT_ENV = "TRAINBENCH_TEST_SLOW_PUT"


def open_store(directory: str, keep: int = 3, warn: Callable[[str], None] | None = None,
               endpoint: str | None = None) -> Any:
    """The checkpoint store for `--checkpoint-dir`: a local directory or an s3:// prefix."""
    if not str(directory).startswith("s3://"):
        return CheckpointStore(directory, keep, warn)
    from ..data.s3 import S3Target, s3_filesystem

    bucket = str(directory)[5:].split("/", 1)[0]
    if not bucket:
        raise InputError(f"--checkpoint-dir {directory}: name a bucket, e.g. s3://my-bucket/run-1")
    target = S3Target(endpoint or os.environ.get("AWS_ENDPOINT_URL"), bucket)
    return ObjectCheckpointStore(str(directory), s3_filesystem(target), keep, warn)


class ObjectCheckpointStore:
    def __init__(self, url: str, fs: Any, keep: int = 3, warn: Callable[[str], None] | None = None):
        self.directory = url.rstrip("/")  # s3://bucket/prefix, as given: for messages
        self.root = self.directory[5:]  # bucket/prefix, fsspec's path
        self.fs = fs
        self.keep = keep
        self.warn = warn or (lambda msg: print(f"warning: {msg}", file=sys.stderr, flush=True))

    # -- writing -------------------------------------------------------------------------
    def check_writable(self) -> None:
        probe = f"{self.root}/.tmp/write-probe-{uuid.uuid4().hex[:8]}"
        try:
            self.fs.pipe_file(probe, b"ok\n")
            self.fs.rm_file(probe)
        except Exception as exc:  # no bucket, no permission, endpoint down
            raise CheckpointWriteError(f"cannot write to --checkpoint-dir {self.directory}: "
                                       f"{type(exc).__name__}: {str(exc)[:200]}; check the bucket, the "
                                       f"credentials (AWS_*) and --s3-endpoint") from None

    def save(self, step: int, payload: dict[str, Any]) -> SavedCheckpoint:
        t0 = time.perf_counter()
        checksum = payload_checksum(payload)
        buf = io.BytesIO()
        torch.save({"format": FORMAT, "step": step, "checksum": checksum, "payload": payload}, buf)
        data = buf.getvalue()
        sha = hashlib.sha256(data).hexdigest()
        final = f"{self.root}/{_name(step)}"
        tmp = f"{self.root}/.tmp/{_name(step)}.{uuid.uuid4().hex[:12]}"
        try:
            self._remove_stale_temps()
            self._put(tmp, data)
            self._verify(tmp, data, sha)
            self.fs.copy(tmp, final)
            if self.fs.info(final)["size"] != len(data):
                raise CheckpointWriteError(f"{self.directory}/{_name(step)}: copy has the wrong size")
            self.fs.rm_file(tmp)
            pointer = {"file": _name(step), "step": step, "checksum": checksum, "sha256": sha, "bytes": len(data)}
            self.fs.pipe_file(f"{self.root}/{POINTER}", (json.dumps(pointer) + "\n").encode())
        except CheckpointWriteError:
            raise
        except Exception as exc:
            raise CheckpointWriteError(f"cannot write checkpoint {_name(step)} to --checkpoint-dir {self.directory}: "
                                       f"{type(exc).__name__}: {str(exc)[:200]}; the previous checkpoint is "
                                       f"untouched") from None
        seconds = time.perf_counter() - t0
        self._prune()
        return SavedCheckpoint(f"{self.directory}/{_name(step)}", step, len(data), seconds, checksum)

    def _put(self, key: str, data: bytes) -> None:
        pause = float(os.environ.get(SLOW_PUT_ENV) or 0)
        with self.fs.open(key, "wb") as f:
            for at in range(0, len(data), CHUNK):
                f.write(data[at:at + CHUNK])
                if pause:
                    print(f"checkpoint: put {min(at + CHUNK, len(data))}/{len(data)} bytes", file=sys.stderr, flush=True)
                    time.sleep(pause)

    def _verify(self, key: str, data: bytes, sha: str) -> None:
        size = self.fs.info(key)["size"]
        back = self.fs.cat_file(key)
        if size != len(data) or hashlib.sha256(back).hexdigest() != sha:
            raise CheckpointWriteError(
                f"{self.directory}: the uploaded checkpoint reads back as {size} bytes with another checksum "
                f"(sent {len(data)} bytes); nothing was published, the previous checkpoint is intact")

    def _remove_stale_temps(self) -> None:
        try:
            stale = self.fs.ls(f"{self.root}/.tmp", detail=False, refresh=True)
        except FileNotFoundError:
            return
        for key in stale:
            self.fs.rm_file(key)

    def clear(self) -> None:
        """--overwrite: the pointer first, then the checkpoints (see CheckpointStore.clear)."""
        if self.fs.exists(f"{self.root}/{POINTER}"):
            self.fs.rm_file(f"{self.root}/{POINTER}")
        for key in self._keys():
            self.fs.rm_file(f"{self.root}/{key}")
        self._remove_stale_temps()

    def _prune(self) -> None:
        named = (self.pointer() or {}).get("file")
        for key in [k for k in self._keys() if k != named][max(0, self.keep - 1):]:
            try:
                self.fs.rm_file(f"{self.root}/{key}")
            except Exception as exc:
                self.warn(f"could not delete old checkpoint {self.directory}/{key}: {exc}")

    # -- reading -------------------------------------------------------------------------
    def _keys(self) -> list[str]:
        """Checkpoint names, newest step first."""
        try:
            names = [k.rsplit("/", 1)[-1] for k in self.fs.ls(self.root, detail=False, refresh=True)]
        except FileNotFoundError:
            return []
        found = [(int(m.group(1)), n) for n in names if (m := _NAME.match(n))]
        return [n for _, n in sorted(found, reverse=True)]

    def checkpoints(self) -> list[str]:
        return [f"{self.directory}/{k}" for k in self._keys()]

    def has_checkpoints(self) -> bool:
        return bool(self._keys()) or self.fs.exists(f"{self.root}/{POINTER}")

    def pointer(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.fs.cat_file(f"{self.root}/{POINTER}"))
        except (OSError, ValueError):
            return None

    def latest_valid(self) -> LoadedCheckpoint | None:
        skipped: list[tuple[str, str]] = []
        for key in self._keys():
            where = f"{self.directory}/{key}"
            t0 = time.perf_counter()
            try:
                doc = read_checkpoint(where, self.fs.cat_file(f"{self.root}/{key}"))
            except (CheckpointCorrupt, FileNotFoundError) as exc:
                skipped.append((where, str(exc)))
                self.warn(f"skipping checkpoint {where}: {exc}; falling back to the previous one")
                continue
            seconds = time.perf_counter() - t0  # GET + weights_only load + checksum
            if int(doc["step"]) != int(_NAME.match(key).group(1)):
                skipped.append((where, "step in the file does not match its name"))
                continue
            return LoadedCheckpoint(where, int(doc["step"]), doc["payload"], seconds, skipped)
        return None
