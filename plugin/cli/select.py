"""Rank cloud instances by cost and time per epoch for the workloads in results files.

`trainbench select RESULTS... [--workload W] [--spot] [--clouds aws,gcp] [--out DIR]` writes
`select.md`, `select.html` (charts embedded, one self-contained page) and `select.json` (one
object per row) under --out and prints a compact ranking that fits 120 columns. Exit 0, or 2
with a message on bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..records.atomic import atomic_write_text
from ..catalog.gpus import CATALOG_DATE
from ..catalog.prices import PRICE_MODES, PRICES_ENV, load_prices, packaged_prices
from ..cost.measured_spot import measured_spot_assumptions
from ..cost.spot import SpotAssumptions
from ..records.results import load_results
from ..select.export import render_json, render_terminal
from ..convergence.select_column import add_target_column
from ..select.render import render_html, render_markdown, spot_model_text
from ..select.rows import SelectConfig, build_groups
from ..harness.precision import PRECISIONS
from . import types

__all__ = ["add_parser", "run"]

KNOWN_CLOUDS = ("aws", "gcp", "azure", "alibaba", "tencent")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "select",
        help="rank cloud instances by cost and time per epoch (measured or projected), with memory fit",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("results", nargs="+", metavar="RESULTS", help="results files (JSON) from one or more machines")
    p.add_argument("--workload", help="only this workload (default: every workload in the results)")
    p.add_argument("--size", help="preset to project to, e.g. full (default: the measured one)")
    p.add_argument("--precision", choices=tuple(PRECISIONS),
                   help="precision to project to (default: the measured one)")
    p.add_argument("--spot", action="store_true", help="rank by expected spot cost (interruptions included)")
    p.add_argument("--clouds", type=types.comma_list("--clouds", lambda: KNOWN_CLOUDS), help=f"comma-separated clouds to include ({', '.join(KNOWN_CLOUDS)})")
    p.add_argument("--price-file", help=f"a price CSV merged over the packaged catalog (also ${PRICES_ENV})")
    p.add_argument("--price-mode", choices=PRICE_MODES,
                   help="merge the price file over the catalog (default) or replace it")
    p.add_argument("--mtbi-hours", type=types.number("--mtbi-hours"), default=SpotAssumptions.mtbi_s / 3600,
                   help="assumed mean time between spot interruptions, hours (default %(default)g)")
    p.add_argument("--restart-min", type=types.number("--restart-min"), default=None,
                   help="minutes to get a replacement running (default: measured by bench/test_preemption.py "
                        f"when the results hold goodput records, else assumed {SpotAssumptions.restart_s / 60:g})")
    p.add_argument("--ckpt-save-s", type=types.number("--ckpt-save-s"),
                   help="checkpoint write time in s (default: resume records, else estimated)")
    p.add_argument("--out", default="reports", help="directory for select.md, select.html and select.json (default %(default)s)")
    p.set_defaults(func=run)
    return p


def run(args) -> int:
    results = [load_results(path) for path in args.results]
    prices = load_prices(args.price_file, args.price_mode)
    user = args.price_file or None
    note = f"packaged catalog of {CATALOG_DATE} ({len(packaged_prices())} rows, sources per row)"
    if user or len(prices) != len(packaged_prices()) or args.price_mode == "replace":
        note += f"; price file {args.price_file or '$' + PRICES_ENV} ({args.price_mode or 'merge'})"
    cfg = SelectConfig(
        workload=args.workload, size=args.size, precision=args.precision, spot=args.spot, clouds=args.clouds,
        spot_assumptions=measured_spot_assumptions(results, SpotAssumptions(
            mtbi_s=args.mtbi_hours * 3600,
            restart_s=(args.restart_min if args.restart_min is not None else SpotAssumptions.restart_s / 60) * 60,
        ), restart_given=args.restart_min is not None),
        ckpt_save_s=args.ckpt_save_s,
    )
    groups = build_groups(results, prices, cfg)
    add_target_column(groups, results)  # "$ to target" from convergence records (plugin/convergence)
    sources = [str(r.path) for r in results]
    markdown = render_markdown(groups, cfg, sources, note)
    out = Path(args.out)
    md_path = atomic_write_text(out / "select.md", markdown)
    html_path = atomic_write_text(out / "select.html", render_html(groups, cfg, sources, note))
    json_path = atomic_write_text(out / "select.json", render_json(groups, cfg.spot))
    print(render_terminal(groups, cfg.spot, [str(md_path), str(html_path), str(json_path)]))
    if cfg.spot:  # the basis of every spot figure: measured restart/save times, or the assumptions
        print(spot_model_text(cfg))
    return 0
