"""A directory of checkpoints: atomic saves, the latest *valid* one on resume, keep the last K.

Layout of `--checkpoint-dir`:

    step-00000040.pt    torch.save({"format", "step", "checksum", "payload"})
    step-00000050.pt
    latest              JSON {"file", "step", "checksum"}: written only after the file it names
                        is complete and fsynced, so it never points at a partial file

A save writes a temp file in the same directory, fsyncs it, `os.replace`s it over the final
name and fsyncs the directory (plugin/atomic.py); a kill at any moment leaves either the old
set of checkpoints or the new one, plus at worst a stray `.step-*.tmp` (removed by the next
save). Discovery walks the checkpoints newest first and takes the first whose checksum
matches; each one it skips (truncated, corrupt, checksum mismatch) is reported by name.

Loading uses only `torch.load(weights_only=True)`: tensors and plain types, no code. A file
that asks the unpickler for a global (a function or class: the mark of a malicious pickle) is
refused with `CheckpointRefused` -- a hard stop, not a silent fall-back, since someone put it
there -- and nothing in it runs.
"""

from __future__ import annotations

import errno
import io
import json
import os
import pickle
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable

import torch

from ..records.atomic import atomic_write, atomic_write_text
from .checksum import payload_checksum
from ..errors import TrainbenchError

__all__ = [
    "FORMAT",
    "CheckpointStore",
    "SavedCheckpoint",
    "LoadedCheckpoint",
    "CheckpointWriteError",
    "CheckpointRefused",
    "CheckpointCorrupt",
    "read_checkpoint",
]

FORMAT = "trainbench-checkpoint/1"
POINTER = "latest"
_NAME = re.compile(r"^step-(\d{8,})\.pt$")
# Test hook (kill-during-save tests): "STEP:SECONDS" pauses the save of that step after the
# bytes are written and before the file is fsynced and moved into place.
PAUSE_ENV = "TRAINBENCH_TEST_PAUSE_SAVE"


class CheckpointWriteError(TrainbenchError):
    """The checkpoint could not be written (full disk, no permission); earlier ones are intact."""


class CheckpointRefused(TrainbenchError):
    """weights_only loading refused the file: it carries pickled code or objects. Nothing ran."""


class CheckpointCorrupt(Exception):
    """Truncated, unreadable or checksum mismatch: discovery skips it and takes the previous one."""


@dataclass
class SavedCheckpoint:
    path: Path
    step: int
    bytes: int  # file size
    seconds: float  # serialize + write + fsync + replace, host wall time
    checksum: str


@dataclass
class LoadedCheckpoint:
    path: Path
    step: int
    payload: dict[str, Any]
    seconds: float  # read + unpickle (weights_only) + checksum verification
    skipped: list[tuple[Path, str]] = field(default_factory=list)  # newer files passed over, why


def _name(step: int) -> str:
    return f"step-{step:08d}.pt"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip(": ")


def read_checkpoint(path: str | os.PathLike, data: bytes | None = None) -> dict[str, Any]:
    """Load and verify one checkpoint file (or its `data`, read from an object store, `path`
    naming it in messages); returns the whole document (payload inside).

    Raises CheckpointRefused for a pickle that needs code, CheckpointCorrupt for anything else
    wrong with the file.
    """
    source = io.BytesIO(data) if data is not None else Path(path)
    try:
        doc = torch.load(source, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        blocked = re.search(r"GLOBAL ([\w.]+)|global[: ]+([\w.]+)", str(exc))
        if blocked:
            what = blocked.group(1) or blocked.group(2)
            raise CheckpointRefused(
                f"refused to load checkpoint {path}: it contains a pickled reference to `{what}`, "
                f"code or an object that torch.load(weights_only=True) will not import or call, so "
                f"nothing in the file was executed. trainbench never writes such objects: the file "
                f"was tampered with or is not a trainbench checkpoint. Move it out of the checkpoint "
                f"directory (resume then uses the previous checkpoint) or use a fresh --checkpoint-dir."
            ) from None
        raise CheckpointCorrupt(f"unreadable ({_first_line(exc)[:200]})") from None
    except FileNotFoundError:
        raise CheckpointCorrupt("missing") from None
    except Exception as exc:  # truncated zip, bad record, bad header: all mean a broken file
        raise CheckpointCorrupt(f"unreadable, truncated? ({_first_line(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or "payload" not in doc:
        raise CheckpointCorrupt(f"not a {FORMAT} file")
    actual = payload_checksum(doc["payload"])
    if actual != doc.get("checksum"):
        raise CheckpointCorrupt(f"checksum mismatch (stored {str(doc.get('checksum'))[:12]}, computed {actual[:12]})")
    return doc


def _pause_hook(step: int, tmp_name: str) -> None:
    spec = os.environ.get(PAUSE_ENV)
    if not spec:
        return
    at, _, seconds = spec.partition(":")
    if int(at) == step:
        print(f"checkpoint: pausing {seconds}s before moving {tmp_name} into place ({PAUSE_ENV})",
              file=sys.stderr, flush=True)
        time.sleep(float(seconds or 60))


def _serialize(doc: dict[str, Any], f: IO[bytes]) -> None:
    torch.save(doc, f)


class CheckpointStore:
    def __init__(self, directory: str | os.PathLike, keep: int = 3,
                 warn: Callable[[str], None] | None = None):
        self.directory = Path(directory)
        self.keep = keep  # newest checkpoints kept on disk; older ones are deleted after a save
        self.warn = warn or (lambda msg: print(f"warning: {msg}", file=sys.stderr, flush=True))

    # -- writing -------------------------------------------------------------------------
    def check_writable(self) -> None:
        """Fail before training if the directory cannot take a checkpoint."""
        probe = self.directory / ".write-probe"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            atomic_write_text(probe, "ok\n")
            probe.unlink()
        except OSError as exc:
            raise CheckpointWriteError(self._write_message(exc, "cannot write to")) from None

    def save(self, step: int, payload: dict[str, Any]) -> SavedCheckpoint:
        t0 = time.perf_counter()
        checksum = payload_checksum(payload)
        doc = {"format": FORMAT, "step": step, "checksum": checksum, "payload": payload}
        path = self.directory / _name(step)

        def write(f: IO[bytes]) -> None:
            _serialize(doc, f)
            f.flush()
            _pause_hook(step, Path(f.name).name if isinstance(getattr(f, "name", None), str) else "temp file")

        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._remove_stale_temps()
            atomic_write(path, write)
            pointer = {"file": path.name, "step": step, "checksum": checksum}
            atomic_write_text(self.directory / POINTER, json.dumps(pointer) + "\n")
        except OSError as exc:
            raise CheckpointWriteError(self._write_message(exc, f"cannot write checkpoint {path.name} to")) from None
        seconds = time.perf_counter() - t0
        self._prune()
        return SavedCheckpoint(path, step, path.stat().st_size, seconds, checksum)

    def _write_message(self, exc: OSError, what: str) -> str:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        code = errno.errorcode.get(exc.errno or 0, "")
        fix = {
            errno.ENOSPC: "free disk space or point --checkpoint-dir at a larger volume",
            errno.EDQUOT: "raise the quota or point --checkpoint-dir elsewhere",
            errno.EACCES: "make it writable or point --checkpoint-dir at a writable directory",
            errno.EPERM: "make it writable or point --checkpoint-dir at a writable directory",
            errno.EROFS: "the file system is read-only: point --checkpoint-dir at a writable one",
        }.get(exc.errno or 0, "check the path given to --checkpoint-dir")
        previous = self.checkpoints()
        kept = (f"the previous checkpoint {previous[0].name} is intact" if previous
                else "no earlier checkpoint exists there")
        return f"{what} --checkpoint-dir {self.directory}: {reason} ({code}); {fix}. Nothing was overwritten: {kept}."

    def _remove_stale_temps(self) -> None:
        for tmp in self.directory.glob(".step-*.tmp"):
            tmp.unlink(missing_ok=True)
        for tmp in self.directory.glob(f".{POINTER}.*.tmp"):
            tmp.unlink(missing_ok=True)

    def clear(self) -> None:
        """--overwrite: remove an earlier run's checkpoints and its pointer (pointer first: a kill
        half-way leaves no `latest` naming a deleted file)."""
        (self.directory / POINTER).unlink(missing_ok=True)
        for old in self.checkpoints():
            old.unlink(missing_ok=True)
        if self.directory.is_dir():
            self._remove_stale_temps()

    def _prune(self) -> None:
        # after the pointer names the new file; never the file it names, whatever the steps say
        named = (self.pointer() or {}).get("file")
        for old in [p for p in self.checkpoints() if p.name != named][max(0, self.keep - 1):]:
            try:
                old.unlink()
            except OSError as exc:
                self.warn(f"could not delete old checkpoint {old}: {exc}")

    # -- reading -------------------------------------------------------------------------
    def checkpoints(self) -> list[Path]:
        """Checkpoint files, newest step first (valid or not)."""
        if not self.directory.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.directory.iterdir() if (m := _NAME.match(p.name))]
        return [p for _, p in sorted(found, reverse=True)]

    def has_checkpoints(self) -> bool:
        return bool(self.checkpoints()) or (self.directory / POINTER).exists()

    def pointer(self) -> dict[str, Any] | None:
        try:
            return json.loads((self.directory / POINTER).read_text())
        except (OSError, ValueError):
            return None

    def latest_valid(self) -> LoadedCheckpoint | None:
        """The newest checkpoint that loads and verifies; None if there is none."""
        skipped: list[tuple[Path, str]] = []
        for path in self.checkpoints():
            t0 = time.perf_counter()
            try:
                doc = read_checkpoint(path)
            except CheckpointCorrupt as exc:
                skipped.append((path, str(exc)))
                self.warn(f"skipping checkpoint {path}: {exc}; falling back to the previous one")
                continue
            seconds = time.perf_counter() - t0
            if int(doc["step"]) != int(_NAME.match(path.name).group(1)):
                skipped.append((path, "step in the file does not match its name"))
                self.warn(f"skipping checkpoint {path}: step in the file does not match its name")
                continue
            return LoadedCheckpoint(path, int(doc["step"]), doc["payload"], seconds, skipped)
        return None
