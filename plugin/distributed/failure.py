"""Which rank failed, from torchrun's failure summary (printed when a worker fails):

    Failures:
    [1]:
      host      : node7
      rank      : 0 (local_rank: 0)
      exitcode  : 1 (pid: 12487)
      traceback : ... RuntimeError: Connection closed by peer ...
    ------------------------------------------------------------
    Root Cause (first observed failure):
    [0]:
      ...

torchrun's "root cause" is the failure with the earliest error file, so a rank killed by a
signal (no error file) loses to a peer that raised "connection closed" a moment later. Here a
failure is a *victim* when it is a SIGTERM (torchrun stopping the survivors) or a lost-peer
error; the culprit is the first failure that is not a victim, else torchrun's root cause.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass

__all__ = ["RankExit", "parse_failures", "explain"]

_BLOCK = re.compile(r"^\[\d+\]:\s*$(.*?)(?=^\[\d+\]:\s*$|^-{5,}|^={5,}|\Z)", re.M | re.S)
_RANK = re.compile(r"^\s*rank\s*:\s*(\d+)\s*\(local_rank:\s*(\d+)\)", re.M)
_HOST = re.compile(r"^\s*host\s*:\s*(\S+)", re.M)
_CODE = re.compile(r"^\s*exitcode\s*:\s*(-?\d+)", re.M)
_TRACE = re.compile(r"^\s*traceback\s*:\s*(.*)", re.M | re.S)
# errors a rank raises because *another* rank went away (gloo, NCCL, c10d store)
_PEER_LOSS = re.compile(
    r"closed by peer|reset by peer|remote worker|remote process|Broken pipe|ncclRemoteError|"
    r"communicator was aborted|Connection refused|recvBytes|sendBytes",
    re.I,
)
_ROOT = "Root Cause (first observed failure):"


@dataclass
class RankExit:
    rank: int
    local_rank: int
    host: str
    exitcode: int  # < 0: killed by signal -exitcode
    detail: str  # last line of the rank's error, "" when none
    root: bool  # torchrun's "first observed failure"

    @property
    def victim(self) -> bool:
        return self.exitcode == -signal.SIGTERM or bool(_PEER_LOSS.search(self.detail))

    def how(self) -> str:
        if self.exitcode >= 0:
            return f"exited with code {self.exitcode}"
        try:
            name = signal.Signals(-self.exitcode).name
        except ValueError:
            name = "unknown signal"
        return f"was killed by signal {-self.exitcode} ({name})"

    def words(self) -> str:
        out = f"rank {self.rank} (local rank {self.local_rank} on host {self.host}) {self.how()}"
        return out + (f": {self.detail}" if self.detail else "")

    def as_follower(self) -> str:
        if self.exitcode == -signal.SIGTERM:
            return f"rank {self.rank} was stopped by torchrun (SIGTERM)"
        if self.victim:
            return f"rank {self.rank} failed after losing a peer"
        return self.words()


def _detail(block: str) -> str:
    m = _TRACE.search(block)
    lines = [l.strip() for l in m.group(1).splitlines() if l.strip()] if m else []
    last = lines[-1] if lines else ""
    if last.startswith(("Signal ", "To enable traceback")) or last == "<N/A>":
        return ""
    return last[:300]


def parse_failures(log: str) -> list[RankExit]:
    """Every failed rank in the last summary of `log`, torchrun's root cause first."""
    start = log.rfind("Failures:")
    root_at = log.rfind(_ROOT)
    if start < 0 or (0 <= root_at < start):
        start = root_at
    if start < 0:
        return []
    exits = []
    for m in _BLOCK.finditer(log, start):
        block = m.group(1)
        rank, host, code = _RANK.search(block), _HOST.search(block), _CODE.search(block)
        if rank is None or code is None:
            continue
        exits.append(RankExit(int(rank.group(1)), int(rank.group(2)), host.group(1) if host else "?",
                              int(code.group(1)), _detail(block), root_at >= 0 and m.start() > root_at))
    return sorted(exits, key=lambda e: not e.root)


def explain(log: str) -> tuple[list[int], str]:
    """(ranks, culprit first; a sentence) or ([], "") when the log has no summary."""
    exits = parse_failures(log)
    if not exits:
        m = re.search(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+)", log)  # torchrun's log line
        if not m:
            return [], ""
        return [int(m.group(2))], f"local rank {m.group(2)} {RankExit(0, 0, '?', int(m.group(1)), '', True).how()}"
    culprits = [e for e in exits if not e.victim] or exits[:1]
    first = culprits[0]
    rest = [e for e in exits if e is not first]
    words = f"{first.words()} (first failure)"
    if rest:
        words += "; then " + "; ".join(e.as_follower() for e in rest)
    return [first.rank, *(e.rank for e in rest)], words
