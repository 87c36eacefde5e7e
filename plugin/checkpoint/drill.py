"""Kill drills: `trainbench train` as a child process that a test signals at a chosen moment.

    d = Drill.start(["--workload", "gpt-small", ...], workdir, hold_at=4)
    d.wait_for("held at step 4"); d.signal(signal.SIGKILL); d.finish()

Signals are real (SIGTERM, SIGKILL to the child's pid); the child's stderr goes to a file so a
test can wait for a line without a pipe filling up.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from ..harness.oom import release_device_memory
from .resumable import HOLD_ENV

__all__ = ["Drill", "train"]

def _env(extra: dict[str, str] | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop(HOLD_ENV, None)
    env.update(extra or {})
    return env


class Drill:
    def __init__(self, proc: subprocess.Popen, stderr_path: Path):
        self.proc = proc
        self.stderr_path = stderr_path

    @classmethod
    def start(cls, args: Sequence[str], workdir: str | os.PathLike, *, hold_at: int | None = None,
              env: dict[str, str] | None = None, name: str = "train") -> "Drill":
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        extra = dict(env or {})
        if hold_at is not None:
            extra[HOLD_ENV] = str(hold_at)
        n = len(list(workdir.glob(f"{name}*.stderr")))
        stderr_path = workdir / f"{name}{n}.stderr"
        with stderr_path.open("wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "trainbench.cli", "train", *map(str, args)],
                                    stdout=subprocess.DEVNULL, stderr=err, env=_env(extra))
        return cls(proc, stderr_path)

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_for(self, text: str, timeout: float = 180.0) -> None:
        """Until `text` appears on the child's stderr; an early exit or a timeout raises."""
        deadline = time.perf_counter() + timeout
        while text not in self.stderr:
            if self.proc.poll() is not None and text not in self.stderr:
                raise RuntimeError(f"train exited {self.proc.returncode} before printing {text!r}:\n{self.stderr}")
            if time.perf_counter() > deadline:
                self.proc.kill()
                raise TimeoutError(f"no {text!r} from train within {timeout} s:\n{self.stderr}")
            time.sleep(0.02)

    def wait_for_log_steps(self, loss_log: str | os.PathLike, steps: int, timeout: float = 180.0) -> None:
        """Until the loss log holds `steps` complete lines (used to kill at a racy moment)."""
        deadline = time.perf_counter() + timeout
        path = Path(loss_log)
        while not (path.exists() and path.read_text().count("\n") >= steps):
            if self.proc.poll() is not None:
                raise RuntimeError(f"train exited {self.proc.returncode} before step {steps}:\n{self.stderr}")
            if time.perf_counter() > deadline:
                self.proc.kill()
                raise TimeoutError(f"train did not reach step {steps} within {timeout} s:\n{self.stderr}")
            time.sleep(0.01)

    def signal(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def finish(self, timeout: float = 300.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


def train(args: Sequence[str], workdir: str | os.PathLike, *, env: dict[str, str] | None = None,
          timeout: float = 300.0, name: str = "train") -> tuple[int, str]:
    """Run `trainbench train` to the end; (exit code, stderr)."""
    release_device_memory()  # a subprocess on the same GPU gets what this process cached
    d = Drill.start(args, workdir, env=env, name=name)
    rc = d.finish(timeout)
    return rc, d.stderr
