"""Results files named on the command line: paths, directories (their *.json) or globs, loaded
and ordered by start time (then commit, then path) -- the order of a nightly series."""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Sequence

from ..errors import InputError
from ..records.results import Results, load_results

__all__ = ["expand_results_paths", "load_series"]


def expand_results_paths(specs: Sequence[str], flag: str) -> list[Path]:
    """Every results file the specs name, each once; InputError naming a spec that names none."""
    out: dict[Path, None] = {}
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise InputError(f"{flag} {spec}: directory holds no results files (*.json); "
                                 f"point it at the folder the runs wrote (reports/results/)")
        elif any(c in spec for c in "*?["):
            found = sorted(Path(p) for p in glob.glob(spec) if Path(p).is_file())
            if not found:
                raise InputError(f"{flag} {spec}: the pattern matches no file; check the path and quote it")
        else:
            found = [path]  # load_results names it when it is missing
        out.update(dict.fromkeys(found))
    if not out:
        raise InputError(f"{flag}: no results file given")
    return list(out)


def _order(results: Results) -> tuple:
    env = results.environment
    return (str(env.get("start_time") or ""), str(env.get("git_commit") or ""), str(results.path))


def load_series(specs: Sequence[str], flag: str) -> list[Results]:
    """Load and order by start time; a file of another schema is refused naming it."""
    return sorted((load_results(p) for p in expand_results_paths(specs, flag)), key=_order)
