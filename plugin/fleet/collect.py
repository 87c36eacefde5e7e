"""Bring the sweep's results files home and rank the instances with them.

Files come from the bucket (fsspec: s3fs for s3://; gs:// needs gcsfs installed) or from each
launched cluster through the launcher's rsync. A candidate whose results cannot be fetched is
listed as missing; the others still count. The report is `select`'s own: rows of a GPU that
ran say "measured on <gpu>", the rest stay projections.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..catalog.prices import PriceRow
from ..errors import InputError
from ..records.results import Results
from ..select.render import render_html, render_markdown
from ..select.rows import SelectConfig, build_groups
from .launch import Launcher
from .manifest import Plan, read_launches

__all__ = ["RESULTS_SUBDIR", "Report", "fetch_results", "results_files", "select_report"]

RESULTS_SUBDIR = "results"


@dataclass(frozen=True)
class Report:
    markdown: str
    html: str
    sources: list[str]


def _from_bucket(bucket: str, sweep: str, local: Path) -> None:
    import fsspec

    fs, root = fsspec.core.url_to_fs(f"{bucket.rstrip('/')}/{sweep}")
    local.mkdir(parents=True, exist_ok=True)
    for remote in fs.glob(f"{root}/*.json"):
        fs.get(remote, str(local / Path(remote).name))


def fetch_results(directory: Path, plan: Plan, launcher: Launcher) -> list[str]:
    """Fetch into directory/results; returns one line per candidate (fetched or why not)."""
    local = directory / RESULTS_SUBDIR
    if plan.bucket:
        try:
            _from_bucket(plan.bucket, plan.name, local)
        except ImportError as exc:
            raise InputError(f"--bucket {plan.bucket}: its fsspec backend is not installed ({exc}); "
                             f"pip install gcsfs for gs://") from None
        return [f"bucket {plan.bucket}/{plan.name}: copied into {local}"]
    lines = []
    launches = read_launches(directory)
    for task in plan.tasks:
        if launches.get(task.name, {}).get("status") != "launched":
            lines.append(f"{task.name}: not launched, nothing to fetch")
            continue
        try:
            launcher.fetch(task.name, plan.results_dir, local)
        except Exception as exc:  # one unreachable cluster must not lose the others' results
            lines.append(f"{task.name}: fetch FAILED ({type(exc).__name__}: {exc})")
        else:
            lines.append(f"{task.name}: fetched into {local}")
    return lines


def results_files(directory: Path) -> list[Path]:
    folder = directory / RESULTS_SUBDIR
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        raise InputError(f"{folder}: no results files; run `trainbench fleet collect {directory}` after the "
                         f"runs finish, or put results files (JSON) there")
    return files


def select_report(results: Sequence[Results], prices: Sequence[PriceRow], cfg: SelectConfig,
                  price_note: str) -> Report:
    groups = build_groups(results, prices, cfg)
    sources = [str(r.path) for r in results]
    return Report(render_markdown(groups, cfg, sources, price_note), render_html(groups, cfg, sources, price_note),
                  sources)
