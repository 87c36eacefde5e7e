"""Which drills a session runs. The convergence and preemption drills (marker `drill`) train
to a target loss over several seeds, or kill and restart training processes: minutes even on
tiny presets, so a plain `pytest bench/` leaves them out and says so. They run when asked for
in any of the ways a pytest user asks: `--drills`, a `-m` or `-k` expression, or their file or
test named on the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pytest

__all__ = ["MARKER", "drills_requested", "deselect_drills"]

MARKER = "drill"


def drills_requested(*, flag: bool, keyword: str, markexpr: str, args: Iterable[str], module: Path) -> bool:
    """True when this session asked for the drills in `module` (a pure decision, tested alone)."""
    if flag or keyword.strip() or MARKER in markexpr:
        return True
    for arg in args:
        path = Path(arg.split("::", 1)[0])
        if path.suffix == ".py" and path.resolve() == module.resolve():
            return True
    return False


def deselect_drills(config: pytest.Config, items: list[pytest.Item]) -> int:
    """Drop the drills nobody asked for from `items` (reported as deselected); returns how many."""
    opt = config.option
    left_out = [item for item in items if item.get_closest_marker(MARKER) is not None and not drills_requested(
        flag=bool(getattr(opt, "drills", False)), keyword=opt.keyword or "", markexpr=opt.markexpr or "",
        args=config.args, module=Path(str(item.path)))]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        dropped = set(map(id, left_out))
        items[:] = [item for item in items if id(item) not in dropped]
    return len(left_out)
