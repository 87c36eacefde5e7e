"""What every rank does around a benchmark under torchrun: process groups, its device, its
pid and result files, and fault injection for the failure tests.

Files a rank writes into the launch's output directory (`--out`):
  rank<R>.pid    at start: the pid, so a launcher that times out can kill the rank itself
                 (torchrun starts each worker in its own session)
  rank<R>.json   at the end: what this rank measured (its own view)
  result.json    rank 0 only: the benchmark result over all ranks (gathered collectively, so it
                 is complete on multi-node runs where other nodes' files live elsewhere)

Fault injection (tests and diagnostics): TRAINBENCH_FAULT="MODE:RANK@STEP" makes global rank
RANK fail at its STEP-th fault point (0-based; one per timed trial or per micro-batch fetch).
MODE is kill (SIGKILL itself), exit (os._exit(3)), raise (RuntimeError) or hang (sleep forever).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import torch
import torch.distributed as dist

from ..records.atomic import atomic_write_text

__all__ = ["RankContext", "init_ranks", "FaultPoint", "FAULT_ENV", "RESULT_FILE", "rank_file"]

FAULT_ENV = "TRAINBENCH_FAULT"
RESULT_FILE = "result.json"
_FAULT = re.compile(r"^(kill|exit|raise|hang):(\d+)@(\d+)$")


def rank_file(out: Path, rank: int, suffix: str = "json") -> Path:
    return Path(out) / f"rank{rank}.{suffix}"


@dataclass
class RankContext:
    rank: int  # global rank
    local_rank: int
    world_size: int
    backend: str  # "nccl" or "gloo"
    device: torch.device
    control: Any  # a gloo group over all ranks: barriers and result gathering off the GPU
    out: Path

    def gather(self, payload: Any) -> list[Any]:
        """Every rank's payload, on every rank (pickled over the gloo control group)."""
        objs: list[Any] = [None] * self.world_size
        dist.all_gather_object(objs, payload, group=self.control)
        return objs

    def barrier(self) -> None:
        dist.barrier(group=self.control)

    def write_rank(self, payload: dict[str, Any]) -> None:
        doc = {"rank": self.rank, "local_rank": self.local_rank, "host": socket.gethostname(), **payload}
        atomic_write_text(rank_file(self.out, self.rank), json.dumps(doc, indent=1) + "\n")

    def write_result(self, payload: dict[str, Any]) -> None:
        if self.rank == 0:
            atomic_write_text(self.out / RESULT_FILE, json.dumps(payload, indent=1) + "\n")

    def close(self) -> None:
        # every rank past its last collective before any tears its connections down: without
        # the barrier a gloo rank occasionally aborted in teardown ("terminate called without an
        # active exception", SIGABRT) after the results were written (seen in CI)
        self.barrier()
        dist.destroy_process_group()


def init_ranks(backend: str, out: str | Path, timeout_s: float) -> RankContext:
    """Join the torchrun job: default group on `backend` ("auto": nccl with CUDA, else gloo)."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rank_file(out, rank, "pid").write_text(f"{os.getpid()}\n")
    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    timeout = _dt.timedelta(seconds=timeout_s)
    kwargs = {"device_id": device} if backend == "nccl" else {}
    dist.init_process_group(backend, timeout=timeout, **kwargs)
    control = dist.new_group(backend="gloo", timeout=timeout) if backend != "gloo" else dist.group.WORLD
    return RankContext(rank, local, world, backend, device, control, out)


class FaultPoint:
    """Counts fault points on this rank and fails at the configured one (see module doc)."""

    def __init__(self, rank: int, spec: str | None = None):
        spec = os.environ.get(FAULT_ENV, "") if spec is None else spec
        self.count = 0
        self.mode = None
        if spec:
            m = _FAULT.match(spec.strip())
            if m is None:
                raise ValueError(f"{FAULT_ENV}={spec!r}: expected MODE:RANK@STEP, MODE kill|exit|raise|hang")
            if int(m.group(2)) == rank:
                self.mode, self.at = m.group(1), int(m.group(3))

    def __call__(self) -> None:
        step, self.count = self.count, self.count + 1
        if self.mode is None or step != self.at:
            return
        if self.mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif self.mode == "exit":
            os._exit(3)
        elif self.mode == "raise":
            raise RuntimeError(f"{FAULT_ENV}: injected failure at fault point {step}")
        while True:  # hang
            time.sleep(3600)

    def wrap(self, batches: Iterator) -> Iterator:
        """A batch iterator with a fault point before every fetch (one per micro-batch)."""
        while True:
            self()
            yield next(batches)
