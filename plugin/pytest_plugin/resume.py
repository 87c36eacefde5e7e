"""`--trainbench-resume=R.json`: continue a sweep a kill cut short.

Tests with a finished record in R.json (any status but an interrupted `error`) are deselected;
the rest run and their records are appended to R.json, which stays the session's results file.
The records already there keep the environment of the session that made them: R.json's
`environment` is kept, and each session that added to it is listed in `environment.sessions`
(start time, host, commit), every record naming its session by index in `config.session`.

A resume must run on the same kind of machine with the same `--gpu` profile, or the file would
mix numbers from two devices under one environment: the keys of `MACHINE_KEYS` must agree. The
host name is not among them: a reclaimed spot VM comes back as a new host of the same type.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..records.results import Results, load_results

__all__ = ["MACHINE_KEYS", "load_resume", "finished_tests"]

MACHINE_KEYS = ("gpu_profile", "gpu_name", "gpu_count", "cpu_model", "cpu_count", "torch", "cuda")


def session_entry(environment: dict[str, Any]) -> dict[str, Any]:
    return {k: environment.get(k) for k in ("start_time", "host", "git_commit")}


def load_resume(path: str | Path, environment: dict[str, Any]) -> Results:
    """R.json read and checked against this session's environment; InputError names the difference."""
    results = load_results(path)
    before = results.environment
    diff = [f"{k}: {before.get(k)!r} in the file, {environment.get(k)!r} now"
            for k in MACHINE_KEYS if before.get(k) != environment.get(k)]
    if diff:
        raise InputError(
            f"--trainbench-resume={path}: recorded on a different machine or --gpu profile ({'; '.join(diff)}); "
            f"resume on the same machine type with the same --gpu, or start a new results file "
            f"(drop --trainbench-resume)")
    sessions = before.setdefault("sessions", [session_entry(before)])
    sessions.append(session_entry(environment))
    for rec in results.records:
        rec.config.setdefault("session", 0)
    # records of a benchmark the kill cut short are dropped: that benchmark runs again
    cut = {r.test for r in results.records if r.config.get("interrupted")}
    results.records = [r for r in results.records if r.test not in cut]
    return results


def finished_tests(results: Results) -> set[str]:
    return {r.test for r in results.records}
