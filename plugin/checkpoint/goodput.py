"""Goodput under preemption: `trainbench train` run to the end through K seeded interruptions.

One trial: start the job; at a seeded step (watched in the loss log) send SIGTERM (the job
finishes its step, checkpoints, exits 75: a spot notice with grace) or SIGKILL (no grace: the
VM vanished); restart with `--resume auto`; repeat K times, then let it finish. Measured:

- restart_to_first_step_s: from launching the restarted process to its first step in the loss
  log (process start, imports, checkpoint load, first step; polled every 10 ms). VM provisioning
  is not in it: on a real cloud that comes on top.
- lost_steps: steps done before an interruption minus the step the restart resumed from.
- ckpt_save_s / ckpt_load_s: from the jobs' --summary-json (the store's own timings).
- goodput = useful step time / wall time, where useful step time is the sum of the step times of
  the steps in the final trajectory (the loss log is cut back on resume, so it holds exactly the
  steps that count) and wall time runs from the first launch to the last exit.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .drill import Drill

__all__ = ["TrialResult", "run_trial"]


@dataclass
class TrialResult:
    goodput: float
    wall_s: float
    useful_s: float
    restart_to_first_step_s: list[float] = field(default_factory=list)
    lost_steps: list[int] = field(default_factory=list)
    save_s: list[float] = field(default_factory=list)
    load_s: list[float] = field(default_factory=list)
    signals: list[str] = field(default_factory=list)


def _log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(l) for l in path.read_text().splitlines() if l.strip().endswith("}")]


_RESUMED = re.compile(r"resumed from \S+ \(step (\d+)|no valid checkpoint")


def _resumed_step(d: Drill, timeout: float = 300.0) -> int:
    """The step the restarted job resumes from, from its "resumed from ... (step K" line."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if m := _RESUMED.search(d.stderr):
            return int(m.group(1) or 0)
        if d.proc.poll() is not None:
            raise RuntimeError(f"train exited {d.proc.returncode} before resuming:\n{d.stderr}")
        time.sleep(0.01)
    raise TimeoutError(f"the restarted train did not resume within {timeout} s:\n{d.stderr}")


def _first_step(d: Drill, log: Path, resumed: int, old_inode: int, timeout: float = 300.0) -> float:
    """perf_counter time when the loss log, rewritten by the restarted job (a new inode: it cuts
    the log back atomically), first shows a step past `resumed` (polled every 10 ms)."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if os.stat(log).st_ino != old_inode and any(e["step"] > resumed for e in _log(log)):
            return time.perf_counter()
        if d.proc.poll() is not None:
            raise RuntimeError(f"train exited {d.proc.returncode} before its first step:\n{d.stderr}")
        time.sleep(0.01)
    raise TimeoutError(f"no step from the restarted train within {timeout} s")


def run_trial(args: Sequence[str], steps: int, interruptions: int, rng: random.Random, workdir: Path,
              env: dict[str, str] | None = None) -> TrialResult:
    """`args`: train flags without --loss-log/--summary-json/--resume (they are added here)."""
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "loss.jsonl"
    out = TrialResult(0.0, 0.0, 0.0)
    start = time.perf_counter()
    done = 0  # steps in the log when the previous process ended
    for i in range(interruptions + 1):
        summary = workdir / f"summary-{i}.json"
        flags = [*args, "--loss-log", log, "--summary-json", summary] + (["--resume", "auto"] if i else [])
        launched = time.perf_counter()
        d = Drill.start(flags, workdir, env=env)
        if i:
            resumed = _resumed_step(d)
            # the killed process may have logged steps after its last checkpoint: they are lost
            out.lost_steps.append(done - resumed)
            if resumed < steps:  # a SIGTERM that landed after the last step leaves nothing to restart
                out.restart_to_first_step_s.append(_first_step(d, log, resumed, inode) - launched)
        if i == interruptions:
            if d.finish() != 0:
                raise RuntimeError(f"the final train run failed:\n{d.stderr}")
        else:
            # a SIGTERM lets the step in flight finish: leave 3 steps for each interruption to come
            at = min(rng.randint(done + 1, max(done + 1, steps - 3 * (interruptions - i))), steps - 1)
            sig = rng.choice([signal.SIGTERM, signal.SIGKILL])
            d.wait_for_log_steps(log, at)
            d.signal(sig)
            d.finish()
            out.signals.append(sig.name)
            done = max((e["step"] for e in _log(log)), default=0)
            inode = os.stat(log).st_ino
        if summary.exists():  # a SIGKILLed job writes none
            s = json.loads(summary.read_text())
            out.save_s += [x["save_s"] for x in s.get("saves", [])]
            if s.get("load_s") is not None:
                out.load_s.append(s["load_s"])
    out.wall_s = time.perf_counter() - start
    out.useful_s = sum(e["step_s"] for e in _log(log))
    out.goodput = out.useful_s / out.wall_s
    return out
