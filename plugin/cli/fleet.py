"""Run the suite across GPU types and clouds on SkyPilot, then rank instances with the results.

    trainbench fleet plan --gpus t4,l4,a10g,a100-80g,h100 --out sweep   # YAMLs + estimate, nothing launched
    trainbench fleet launch sweep                                       # sky launch / sky jobs launch
    trainbench fleet collect sweep                                      # fetch results, select report

Exit 0; 1 when a launch or fetch failed (the others went on); 2 on bad input, one line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import types
from ..catalog.gpus import CATALOG_DATE
from ..catalog.prices import PRICE_MODES, PRICES_ENV, load_prices
from ..records.atomic import atomic_write_text
from ..records.results import load_results
from ..select.rows import SelectConfig

__all__ = ["add_parser", "make_launcher"]

DEFAULT_GPUS = "t4,l4,a10g,a100-80g,h100"


def make_launcher():
    """The launcher the commands use; tests replace this function (no cloud is contacted)."""
    from ..fleet.launch import Sky

    return Sky()


def _fleet_gpus():
    from ..fleet.accelerators import SKY_ACCELERATORS

    return list(SKY_ACCELERATORS)


def _clouds():
    from ..fleet.plan import SKY_CLOUDS

    return SKY_CLOUDS


def _workloads():
    from ..workloads import workload_names

    return workload_names()


def _precisions():
    from ..harness.precision import PRECISIONS

    return list(PRECISIONS)


def _topologies(value: str) -> list[str]:
    from ..distributed.topology import parse_topology_list

    return parse_topology_list(value)


def _plan_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gpus", type=types.comma_list("--gpus", _fleet_gpus), default=types.comma_list("--gpus")(DEFAULT_GPUS),
                   help=f"catalog GPU profiles to compare (default {DEFAULT_GPUS})")
    p.add_argument("--cheapest", type=types.positive_int("--cheapest"), default=None, metavar="N",
                   help="instead of --gpus: the N GPUs cheapest per epoch in select's estimate from --results")
    p.add_argument("--results", nargs="+", type=types.existing_path("--results"), default=None, metavar="FILE",
                   help="results files that --cheapest ranks with (as `trainbench select` would)")
    p.add_argument("--clouds", type=types.comma_list("--clouds", _clouds), default=None,
                   help="clouds whose catalog offers to consider (default aws,gcp,azure); the cheapest is pinned")
    p.add_argument("--spot", action="store_true",
                   help="spot instances as managed jobs that SkyPilot recovers from preemptions (needs --bucket)")
    p.add_argument("--bucket", type=types.bucket_url("--bucket"), default=None,
                   help="s3://NAME or gs://NAME: results are written to this bucket (a SkyPilot storage mount); "
                        "default: left on each cluster for `fleet collect` to rsync")
    p.add_argument("--nodes", type=types.positive_int("--nodes"), default=1,
                   help="> 1: run the distributed benchmarks with torchrun across this many nodes")
    p.add_argument("--gpus-per-node", type=types.positive_int("--gpus-per-node"), default=1,
                   help="accelerators per node (the catalog must offer instances of this size)")
    p.add_argument("--workload", type=types.comma_list("--workload", _workloads), default=None,
                   help="workloads to run (default: the whole suite; multi-node: resnet50)")
    p.add_argument("--precision", type=types.comma_list("--precision", _precisions), default=None,
                   help="precisions to run (default: the suite's; multi-node: bf16, fp16 where the GPU has no bf16)")
    p.add_argument("--size", choices=("tiny", "full"), default=None, help="preset (default: the suite's for a GPU)")
    p.add_argument("--topology", type=types.domain("--topology", _topologies), default=["default"],
                   help="NCCL topology presets for multi-node runs (default: default)")
    p.add_argument("--expected-hours", type=types.number("--expected-hours"), default=1.0,
                   help="assumed suite wall time per task, for the estimate (default %(default)g)")
    p.add_argument("--setup-hours", type=types.number("--setup-hours", low_open=False), default=0.25,
                   help="assumed provisioning + install time per task (default %(default)g)")
    p.add_argument("--max-hours", type=types.number("--max-hours"), default=2.0,
                   help="time cap of the suite on each task; the run is stopped after it (default %(default)g)")
    p.add_argument("--max-usd", type=types.number("--max-usd"), default=None,
                   help="refuse a plan whose estimated cost is above this many dollars")
    p.add_argument("--name", type=types.sky_name("--name"), default="tb",
                   help="sweep name: prefix of cluster and job names (default %(default)s)")
    p.add_argument("--repo", default=None, help="git URL the machines clone (default: the checkout's origin)")
    p.add_argument("--commit", type=types.git_commit("--commit"), default=None,
                   help="commit to install (default: the checkout's HEAD)")
    p.add_argument("--price-file", default=None, help=f"a price CSV merged over the packaged catalog (also ${PRICES_ENV})")
    p.add_argument("--price-mode", choices=PRICE_MODES, default=None)
    p.add_argument("--out", default="sweep", help="plan directory (default %(default)s)")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("fleet", help="run the suite across GPU types and clouds on SkyPilot",
                              description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="fleet_command", metavar="STEP", required=True)
    plan = sub.add_parser("plan", help="write one SkyPilot task YAML per GPU and print the estimated cost")
    _plan_arguments(plan)
    plan.set_defaults(func=run_plan)
    launch = sub.add_parser("launch", help="hand a plan's YAMLs to SkyPilot (sky launch / sky jobs launch)")
    launch.add_argument("plan_dir", metavar="DIR", help="directory written by `fleet plan`")
    launch.add_argument("--only", type=types.comma_list("--only", _fleet_gpus), default=None,
                        help="launch only these GPUs of the plan (e.g. to retry a failed one)")
    launch.add_argument("--max-usd", type=types.number("--max-usd"), default=None,
                        help="refuse when the plan's estimate is above this many dollars")
    launch.set_defaults(func=run_launch)
    collect = sub.add_parser("collect", help="fetch the results files and write the select report")
    collect.add_argument("plan_dir", metavar="DIR", help="plan directory; results land in DIR/results")
    collect.add_argument("--no-fetch", action="store_true", help="use the files already in DIR/results")
    collect.add_argument("--spot", action="store_true", help="rank by expected spot cost")
    collect.add_argument("--workload", default=None, help="only this workload")
    collect.add_argument("--price-file", default=None, help="a price CSV merged over the packaged catalog")
    collect.add_argument("--price-mode", choices=PRICE_MODES, default=None)
    collect.set_defaults(func=run_collect)
    return p


def _cheapest(args, cfg, prices):
    from dataclasses import replace

    from ..errors import InputError
    from ..fleet.plan import cheapest_gpus
    from ..select.rows import SelectConfig, build_groups

    if not args.results:
        raise InputError("--cheapest needs --results FILE... to rank with (e.g. a CPU run's results file)")
    select = SelectConfig(workload=(args.workload or [None])[0], size=args.size or "full",
                          precision=(args.precision or [None])[0], spot=args.spot, clouds=cfg.clouds)
    groups = build_groups([load_results(p) for p in args.results], prices, select)
    return replace(cfg, gpus=cheapest_gpus(groups, args.cheapest, cfg, spot=args.spot))


def run_plan(args) -> int:
    from ..fleet.plan import SKY_CLOUDS, PlanConfig, check_budget, choose_candidates
    from ..fleet.source import resolve_source
    from ..fleet.sweep import estimate_lines, write_sweep

    cfg = PlanConfig(
        gpus=tuple(args.gpus), clouds=tuple(args.clouds or SKY_CLOUDS), spot=args.spot, nodes=args.nodes,
        gpus_per_node=args.gpus_per_node, workloads=tuple(args.workload) if args.workload else None,
        precision=tuple(args.precision) if args.precision else None, size=args.size,
        topologies=tuple(args.topology), setup_hours=args.setup_hours, expected_hours=args.expected_hours,
        max_hours=args.max_hours, max_usd=args.max_usd, name=args.name, bucket=args.bucket,
    )
    prices = load_prices(args.price_file, args.price_mode)
    if args.cheapest:
        cfg = _cheapest(args, cfg, prices)
        print(f"--cheapest={args.cheapest}: {', '.join(cfg.gpus)} (select's estimate from {len(args.results)} "
              f"results file(s))")
    candidates = choose_candidates(cfg, prices)
    source = resolve_source(args.repo, args.commit)
    print("\n".join(estimate_lines(candidates, cfg)))
    check_budget(candidates, cfg.max_usd)
    out = Path(args.out)
    plan = write_sweep(out, cfg, source, candidates)
    print(f"wrote {len(plan.tasks)} task YAMLs under {out / 'tasks'} and {out / 'plan.json'} "
          f"(commit {source.commit[:12]}); nothing launched: `trainbench fleet launch {out}`")
    return 0


def run_launch(args) -> int:
    from ..errors import InputError
    from ..fleet.launch import launch_plan
    from ..fleet.manifest import read_plan

    directory = Path(args.plan_dir)
    plan = read_plan(directory)
    print(f"estimated cost of the sweep: ${plan.estimate_usd:.2f} (at most ${plan.cap_usd:.2f}); {plan.assumptions}")
    if args.max_usd is not None and plan.estimate_usd > args.max_usd:
        raise InputError(f"--max-usd={args.max_usd:g}: the plan's estimate is ${plan.estimate_usd:.2f}; raise "
                         f"--max-usd or launch fewer GPUs with --only")
    lines = launch_plan(directory, plan, make_launcher(), args.only)
    print("\n".join(lines))
    return 1 if any("FAILED" in line for line in lines) else 0


def run_collect(args) -> int:
    from ..catalog.prices import packaged_prices
    from ..fleet.collect import fetch_results, results_files, select_report
    from ..fleet.manifest import read_plan

    directory = Path(args.plan_dir)
    failed = False
    if not args.no_fetch:
        lines = fetch_results(directory, read_plan(directory), make_launcher())
        print("\n".join(lines))
        failed = any("FAILED" in line for line in lines)
    results = [load_results(p) for p in results_files(directory)]
    prices = load_prices(args.price_file, args.price_mode)
    note = f"packaged catalog of {CATALOG_DATE} ({len(packaged_prices())} rows, sources per row)"
    if args.price_file:
        note += f"; price file {args.price_file} ({args.price_mode or 'merge'})"
    report = select_report(results, prices, SelectConfig(workload=args.workload, spot=args.spot), note)
    md = atomic_write_text(directory / "select.md", report.markdown)
    html = atomic_write_text(directory / "select.html", report.html)
    print(report.markdown)
    print(f"wrote {md} and {html}")
    return 1 if failed else 0
