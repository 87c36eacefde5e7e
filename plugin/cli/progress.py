"""Progress of `trainbench bench` / `train` on stderr: a tqdm bar per phase, fed by the
harness's progress listener (harness/progress.py). `--progress auto` shows it only when stderr
is a terminal, so JSON on stdout and CI logs stay clean."""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from ..harness.progress import Progress, Update, listening

__all__ = ["add_progress_option", "cli_progress"]


def add_progress_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", choices=("auto", "on", "off"), default="auto",
                   help="progress bar on stderr (phase, step k/N, s/step, time left): auto = when stderr is a terminal")


class _Bars:
    def __init__(self, label: str):
        self.label = label
        self.bar: Any = None
        self.phase = ""

    def __call__(self, u: Update) -> None:
        from tqdm import tqdm

        if u.phase != self.phase:
            self.close()
            self.phase = u.phase
            # our s/step and time left, not tqdm's rate: the bar is advanced in jumps, not per step
            self.bar = tqdm(total=u.total, desc=f"{self.label} {u.phase}", file=sys.stderr, dynamic_ncols=True,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| step {n_fmt}/{total_fmt} [{elapsed}] {postfix}")
        self.bar.n = u.step
        self.bar.set_postfix_str(f"{u.s_per_step:.2f} s/step, ~{u.left_s:.0f} s left", refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@contextmanager
def cli_progress(mode: str, label: str) -> Iterator[None]:
    show = mode == "on" or (mode == "auto" and sys.stderr.isatty())
    if not show:
        yield
        return
    bars = _Bars(label)
    try:
        with listening(Progress(bars, interval_s=1.0, label=label)):
            yield
    finally:
        bars.close()
