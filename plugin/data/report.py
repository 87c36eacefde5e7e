"""The storage section of the session summary: loader rates per backend and worker count,
training stall per backend (measured and differential, cold vs warm cache), and per workload
the smallest worker count and backend that keep the stall ratio under 5%."""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

from tabulate import tabulate

__all__ = ["storage_section", "recommend", "STALL_TARGET"]

STALL_TARGET = 0.05  # "the GPU is fed": under 5% of the step time waiting for input


def _pct(v: Any) -> str:
    return "n/a" if v is None else f"{v:.1%}"


def _num(v: Any, spec: str = ".1f") -> str:
    return "n/a" if v is None else f"{v:{spec}}"


def _storage_training(records: Sequence[Any]) -> list[Any]:
    return [r for r in records if r.kind == "training" and r.status == "passed" and r.config.get("storage_bench")]


def recommend(records: Sequence[Any], target: float = STALL_TARGET) -> dict[str, dict[str, Any]]:
    """workload -> {"storage", "num_workers", "stall"} of the cheapest fed setup (fewest workers,
    then lowest stall), or {"storage": None, "best": ...} when nothing met the target."""
    out: dict[str, dict[str, Any]] = {}
    by_workload: dict[str, list[Any]] = {}
    for r in _storage_training(records):
        by_workload.setdefault(r.workload, []).append(r)
    for workload, recs in by_workload.items():
        fed = [r for r in recs if r.metrics.get("stall_ratio") is not None and r.metrics["stall_ratio"] < target]
        if fed:
            best = min(fed, key=lambda r: (r.config.get("num_workers", 0), r.metrics["stall_ratio"]))
            out[workload] = {"storage": best.storage, "num_workers": best.config.get("num_workers"),
                             "stall": best.metrics["stall_ratio"]}
        else:
            best = min(recs, key=lambda r: r.metrics.get("stall_ratio", 1.0))
            tried = sorted({r.config.get("num_workers", 0) for r in recs})
            limit, why = limiting_factor(best, recs)
            out[workload] = {"storage": None, "best_storage": best.storage,
                             "best_workers": best.config.get("num_workers"), "stall": best.metrics.get("stall_ratio"),
                             "tried": tried, "limit": limit, "why": why,
                             "suggest": _suggestions(best, limit, tried, {str(r.storage) for r in recs})}
    return out


def _base(storage: str) -> tuple[str, str | None]:
    """`s3+cache[cold]` -> ("s3+cache", "cold"); `local` -> ("local", None)."""
    if storage.endswith("]") and "[" in storage:
        base, state = storage[:-1].split("[", 1)
        return base, state
    return storage, None


def limiting_factor(best: Any, recs: Sequence[Any]) -> tuple[str, str]:
    """("I/O" | "decode" | "workers", why in words) for the best setup tried, from the measured
    split: stall_fetch (cold minus warm cache: reading) against stall_prep (warm cache: decode
    and augment); a backend with no I/O in the path (memory, a warm cache) is decode-bound."""
    m, workers = best.metrics, best.config.get("num_workers", 0)
    same = [r for r in recs if r.storage == best.storage and r.metrics.get("stall_ratio") is not None]
    fewer = [r for r in same if r.config.get("num_workers", 0) < workers]
    if fewer and workers == max(r.config.get("num_workers", 0) for r in recs) and \
            min(r.metrics["stall_ratio"] for r in fewer) > m["stall_ratio"] * 1.2:
        return "workers", (f"stall fell as workers rose to {workers}, the most tried: decode runs in the "
                           "workers, and more of them would share it")
    fetch, prep = m.get("stall_fetch"), m.get("stall_prep")
    if fetch is not None and prep is not None:
        if fetch >= prep:
            return "I/O", f"reading was {_pct(fetch)} of the step time, decode {_pct(prep)} (cold vs warm cache)"
        return "decode", f"decode was {_pct(prep)} of the step time, reading {_pct(fetch)} (cold vs warm cache)"
    base, state = _base(str(best.storage))
    if base == "memory" or state == "warm":
        return "decode", (f"no I/O in the path ({best.storage}): the stall is decode and augment in "
                          f"{workers} loader worker(s)" + (" (the main process)" if not workers else ""))
    return "I/O", f"{best.storage} has no cold/warm split measured; reading is the likelier limit on a remote tier"


def _suggestions(best: Any, limit: str, tried_workers: list[int], tried_storage: set[str]) -> list[str]:
    """What to try next, never a setup already tried."""
    base, _ = _base(str(best.storage))
    out = []
    if limit in ("workers", "decode"):
        out.append(f"--num-workers={max(2, 2 * max(tried_workers))}")
    if limit == "decode":
        out.append("pre-decoded or smaller samples (decode is the limit, not the storage)")
    if limit == "I/O":
        if "+cache" not in base and not any(_base(t)[0] == f"{base}+cache" for t in tried_storage):
            out.append(f"--storage={base}+cache")
        if base not in ("memory", "local"):
            out.append("a faster tier (local NVMe) or more parallel reads (--num-workers)")
    return out


def _flag(storage: str) -> str:
    """`s3+cache[cold]` -> `--storage=s3+cache (cold cache)`: the label as a usable flag."""
    if storage.endswith("]") and "[" in storage:
        base, state = storage[:-1].split("[", 1)
        return f"--storage={base} ({state} cache)"
    return f"--storage={storage}"


def _iops_agreement(training: Sequence[Any], head: Any, fmt: str) -> list[str]:
    """The IOPS check (bench/test_storage.py -m iops): a disk that serves K reads/s caps the run
    at K samples/s, so the headline stall should read 1 - K / pre-loaded, with the disk reached."""
    checked = [r for r in training if r.config.get("iops_check")]
    if not checked:
        return []
    rows = []
    for r in checked:
        c, m = r.config["iops_check"], r.metrics
        rows.append([r.workload, c["iops"], _num(m.get("samples_per_s")), _pct(c["disk_reached"]),
                     _num(m.get("samples_per_s_preloaded")), f"{c['expected_stall']:.3f}",
                     f"{m['stall_ratio']:.3f}", f"{m['stall_in_loop']:.3f}", f"{c['gap']:.3f}"])
    return [*head("stall against an IOPS-bound disk: expected = 1 - K / preloaded, gap = |stall - expected|"),
            tabulate(rows, headers=["workload", "disk ops/s K", "samples/s", "disk reached", "preloaded",
                                    "expected", "stall", "in loop", "gap"],
                     tablefmt=fmt, disable_numparse=True)]


def storage_section(records: Sequence[Any], markdown: bool = False) -> list[str]:
    """Lines for the terminal (or markdown); empty when no storage benchmark ran."""
    fmt = "github" if markdown else "simple"
    loader = [r for r in records if r.kind == "input" and r.status == "passed"]
    training = _storage_training(records)
    if not loader and not training:
        return []
    head = (lambda t: [f"## {t}", ""]) if markdown else (lambda t: [f"--- {t} ---"])
    lines: list[str] = []
    if loader:
        rows = [[r.workload, r.storage, r.config.get("num_workers"), _num(r.metrics.get("samples_per_s")),
                 _num(r.metrics.get("mb_per_s"), ".2f"), _num(r.metrics.get("fetch_ms_per_sample"), ".3f")]
                for r in loader]
        lines += head("input pipeline: loader alone (no model; fetch = cold minus warm cache)")
        lines.append(tabulate(rows, headers=["workload", "storage", "workers", "samples/s", "MB/s",
                                             "fetch ms/sample"], tablefmt=fmt, disable_numparse=True))
    if training:
        rows = [[r.workload, r.storage, r.config.get("num_workers"), _num(r.metrics.get("samples_per_s")),
                 _num(r.metrics.get("samples_per_s_preloaded")), _pct(r.metrics.get("stall_ratio")),
                 _pct(r.metrics.get("stall_in_loop")), _pct(r.metrics.get("stall_fetch")),
                 _pct(r.metrics.get("stall_prep")),
                 _pct(r.metrics.get("gpu_util_mean") / 100 if r.metrics.get("gpu_util_mean") is not None else None)]
                for r in training]
        lines += head("training per storage backend")
        lines += ["stall = 1 - samples/s / preloaded (the differential); in loop = time blocked in next(loader) / step",
                  "time; I/O = cold - warm stall; decode = warm stall", *([""] if markdown else [])]
        lines.append(tabulate(rows, headers=["workload", "storage", "workers", "samples/s", "preloaded",
                                             "stall", "in loop", "I/O", "decode", "GPU util"],
                              tablefmt=fmt, disable_numparse=True))
        lines += _iops_agreement(training, head, fmt)
        notes = [line for r in training if r.config.get("stall_note") for line in textwrap.wrap(
            f"{r.workload} {r.storage} workers={r.config.get('num_workers')}: {r.config['stall_note']}", 118)]
        if notes:
            lines += head("why the two stall figures differ")
            lines += notes
        lines += head(f"recommendation: fewest loader workers and a backend with stall < {STALL_TARGET:.0%}")
        for workload, rec in recommend(records).items():
            if rec["storage"] is not None:
                lines.append(f"{workload}: {_flag(rec['storage'])} --num-workers={rec['num_workers']} "
                             f"(stall {_pct(rec['stall'])})")
            else:
                advice = [f"{workload}: nothing tried kept stall under {STALL_TARGET:.0%} (workers tried "
                          f"{rec['tried']}; best {_pct(rec['stall'])} with {_flag(rec['best_storage'])} "
                          f"--num-workers={rec['best_workers']})", f"limited by {rec['limit']}: {rec['why']}"]
                if rec["suggest"]:
                    advice.append("try: " + "; ".join(rec["suggest"]))
                for i, text in enumerate(advice):  # 120 columns, like the rest of the summary
                    lines += textwrap.wrap(text, 118, initial_indent="  " if i else "", subsequent_indent="    ",
                                           break_on_hyphens=False)
    return lines
