"""Start a worker module on N ranks with torchrun as a subprocess, and get its result back or a
failure that names the rank -- never a hang.

    python -m torch.distributed.run --standalone --nproc-per-node N --max-restarts 0 \\
        -m <module> <args> --out <dir>

- The topology's settings are added to the environment of torchrun, which passes it to ranks.
- torchrun's output (and the ranks', which it forwards) goes to `<dir>/torchrun.log`.
- A rank that dies or raises makes torchrun stop the others and exit non-zero; its failure
  summary ("Root Cause (first observed failure)": rank, host, exit code, error) is parsed into
  the message. Python errors reach that summary through the `@record` decorator on each
  worker's main (torchrun's TORCHELASTIC_ERROR_FILE mechanism).
- After `timeout_s` the run is killed: every rank pid the ranks wrote (torchrun starts each
  worker in its own session, so a process-group kill would miss them), then torchrun's own
  process group (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .failure import explain
from .worker import RESULT_FILE, rank_file

__all__ = ["Launch", "LaunchResult", "RankFailure", "launch", "torchrun_command"]

LOG_FILE = "torchrun.log"


class RankFailure(Exception):
    """A distributed run failed or timed out; the message names the rank(s) and the log."""

    def __init__(self, message: str, ranks: list[int], log_path: Path | None, timed_out: bool = False):
        super().__init__(message)
        self.ranks = ranks  # the first failing rank first; [] when unknown
        self.log_path = log_path
        self.timed_out = timed_out


@dataclass
class Launch:
    module: str  # worker module every rank runs with `python -m`
    args: list[str]  # its arguments (the launcher adds --out)
    nproc: int  # ranks on this node
    out_dir: Path  # rank files, result.json and the log land here
    timeout_s: float = 600.0  # wall-clock limit for the whole run, torchrun start-up included
    env: Mapping[str, str] = field(default_factory=dict)  # topology settings for every rank


@dataclass
class LaunchResult:
    result: dict[str, Any]  # rank 0's result.json
    ranks: list[dict[str, Any]]  # rank<R>.json of every rank on this node
    wall_s: float
    log_path: Path


def torchrun_command(module: str, args: list[str], nproc: int) -> list[str]:
    return [
        sys.executable, "-m", "torch.distributed.run",
        "--standalone", "--nproc-per-node", str(nproc),
        "--max-restarts", "0",  # a benchmark rank that fails is a result, not something to retry
        "--monitor-interval", "0.5",  # seconds between torchrun's checks on its workers
        "-m", module, *args,
    ]


def _environment(extra: Mapping[str, str]) -> dict[str, str]:
    env = dict(os.environ)  # the ranks import the installed `trainbench`, as the caller does
    env.update(extra)
    return env


def launch(spec: Launch) -> LaunchResult:
    out = Path(spec.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / LOG_FILE
    cmd = torchrun_command(spec.module, [*spec.args, "--out", str(out)], spec.nproc)
    start = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=_environment(spec.env), start_new_session=True)
        try:
            rc = proc.wait(timeout=spec.timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc, out, spec.nproc, spec.module)
            missing = [r for r in range(spec.nproc) if not rank_file(out, r).exists()]
            raise RankFailure(
                f"{_what(spec)} timed out after {spec.timeout_s:g} s (--dist-timeout) and was killed; "
                f"ranks without a result: {', '.join(map(str, missing)) or 'none'}"
                f"{_hint(out, spec.nproc)}. Log: {log_path}{_tail(log_path)}",
                missing, log_path, timed_out=True,
            ) from None
        except BaseException:  # KeyboardInterrupt: leave no rank behind
            _kill(proc, out, spec.nproc, spec.module)
            raise
    wall = time.perf_counter() - start
    log_text = log_path.read_text(errors="replace")
    complete = (out / RESULT_FILE).exists() and all(rank_file(out, r).exists() for r in range(spec.nproc))
    if rc != 0 and complete:
        # Every rank wrote its final result, then one died in process teardown (a gloo rank has
        # aborted in destroy_process_group on a loaded 2-core box): the measurement is whole, so
        # it is kept, and the crash is reported as a warning, not hidden.
        _, why = explain(log_text)
        warnings.warn(f"{_what(spec)}: torchrun exit code {rc} after every rank had written its "
                      f"results ({why}); results kept. Log: {log_path}", RuntimeWarning, stacklevel=2)
        rc = 0
    if rc != 0:
        ranks, why = explain(log_text)
        if not ranks:
            ranks = [r for r in range(spec.nproc) if not rank_file(out, r).exists()]
            why = f"ranks without a result: {', '.join(map(str, ranks)) or 'none'}"
        raise RankFailure(f"{_what(spec)} failed (torchrun exit code {rc}): {why}. Log: {log_path}{_tail(log_path)}",
                          ranks, log_path)
    missing = [r for r in range(spec.nproc) if not rank_file(out, r).exists()]
    if missing or not (out / RESULT_FILE).exists():
        raise RankFailure(f"{_what(spec)} exited 0 but ranks {missing or [0]} wrote no result. Log: {log_path}",
                          missing or [0], log_path)
    ranks = [json.loads(rank_file(out, r).read_text()) for r in range(spec.nproc)]
    return LaunchResult(json.loads((out / RESULT_FILE).read_text()), ranks, wall, log_path)


def _what(spec: Launch) -> str:
    return f"torchrun -m {spec.module} on {spec.nproc} rank{'s' if spec.nproc != 1 else ''}"


def _hint(out: Path, nproc: int) -> str:
    started = [r for r in range(nproc) if rank_file(out, r, "pid").exists()]
    if len(started) < nproc:
        return f" (ranks that never started: {', '.join(str(r) for r in range(nproc) if r not in started)})"
    return ""


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return "\n--- last lines of the log ---\n" + "\n".join(text[-lines:]) if text else ""


def _kill(proc: subprocess.Popen, out: Path, nproc: int, module: str) -> None:
    """Kill the ranks (by the pids they wrote, if they still run our module) and torchrun."""
    import psutil

    for r in range(nproc):
        try:
            pid = int(rank_file(out, r, "pid").read_text())
            p = psutil.Process(pid)
            if module in " ".join(p.cmdline()):
                p.kill()
        except (OSError, ValueError, psutil.Error):
            pass
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait()
