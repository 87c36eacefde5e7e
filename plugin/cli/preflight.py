"""`trainbench preflight`: the checklist on this machine before renting more of them.

    trainbench preflight                                   # every registered workload
    trainbench preflight --workload gpt-small --gpu a100-80g --precision bf16
    trainbench preflight --workload my-model --plugin conftest.py --results reports/preflight.json
    trainbench preflight --hardware --no-pipeline --burn-s 30   # node health, burn, matmul peak

Exit code 0 when no item failed (warnings allowed; --fail-on warn counts them too), 1 when one
did, 2 on a usage error: a boot script can drain the machine on 1.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

from ..records.environment import capture_environment
from ..errors import InputError
from ..harness.precision import PRECISIONS, get_precision
from ..harness.run import resolve_device
from .types import comma_list, gpu, nonneg_int, number, positive_int
from ..preflight.plugins import load_plugin
from ..preflight.check import WARN
from ..preflight.report import format_checklist, format_peaks, to_records
from ..preflight.runner import PreflightConfig, run_preflight
from ..records.results import write_results

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("preflight", help="check the environment and the whole training pipeline on this machine",
                       description=__doc__.splitlines()[0])
    p.add_argument("--workload", type=comma_list("--workload"), default=None,
                   help="comma list of workloads to check (default: every registered workload)")
    p.add_argument("--plugin", action="append", default=[], metavar="MODULE_OR_FILE",
                   help="import a module or .py file (e.g. your conftest.py) whose "
                        "pytest_trainbench_register_workloads(register) hook registers your workload; repeatable")
    p.add_argument("--gpu", type=gpu(), default="auto",
                   help="catalog profile the runs will be labelled with; checked against the detected GPU "
                        "and used for the memory estimate (default auto)")
    p.add_argument("--size", choices=("tiny", "full"), default=None,
                   help="model preset (default: full on a GPU, tiny on a CPU)")
    p.add_argument("--precision", choices=tuple(PRECISIONS), default="fp32")
    p.add_argument("--batch-size", type=positive_int("--batch-size"), default=None,
                   help="micro-batch per device (default: the workload's for the size; at most 8 on a CPU)")
    p.add_argument("--grad-accum", type=positive_int("--grad-accum"), default=2,
                   help="k of the gradient-accumulation check: k micro-batches vs one batch k times larger")
    p.add_argument("--overfit-steps", type=positive_int("--overfit-steps"), default=25,
                   help="steps on one repeated batch in the overfit check (default 25)")
    p.add_argument("--num-workers", type=nonneg_int("--num-workers"), default=None,
                   help="DataLoader workers (default: 0 on a CPU, up to 4 on a GPU)")
    p.add_argument("--data-dir", default=".", help="where data and checkpoints will live (disk space, read speed)")
    p.add_argument("--seed", type=nonneg_int("--seed"), default=0)
    p.add_argument("--results", default=None, metavar="PATH",
                   help="also write the checklist as a results file (kind: preflight records)")
    p.add_argument("--no-pipeline", action="store_true", help="environment and memory items only")
    p.add_argument("--no-read-probe", action="store_true", help="skip the read-throughput measurement")
    hw = p.add_argument_group("hardware tier")
    hw.add_argument("--hardware", action="store_true",
                    help="add the hardware tier: ECC and memory repair, PCIe link, NVLinks, persistence, power "
                         "limit, clock events and temperature, MIG, P2P between GPUs (NVML), the measured matmul "
                         "peak and a burn test with a correctness check, on every GPU at once")
    hw.add_argument("--burn-s", type=number("--burn-s", low_open=False), default=None, metavar="SECONDS",
                    help="burn test length (default 60 on a GPU, 3 on a CPU; 0 skips it)")
    hw.add_argument("--skip-burn", action="store_true", help="no burn test (same as --burn-s 0)")
    hw.add_argument("--no-peak", action="store_true", help="do not measure the achievable matmul peak")
    hw.add_argument("--expect-nvlinks", type=nonneg_int("--expect-nvlinks"), default=None, metavar="N",
                    help="NVLinks each GPU should have up (default: the count NVML reports for the device; 0 for a "
                         "PCIe-only node)")
    p.add_argument("--fail-on", choices=("fail", "warn"), default="fail",
                   help="exit 1 on a failed item (default) or on any warning too (a strict boot gate)")
    p.add_argument("--traceback", action="store_true", help="print the traceback of an item that raised")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # torchdata 0.11 calls a deprecated torch API on every loader construction: noise, not news
    warnings.filterwarnings("ignore", "'set_vital' is deprecated", UserWarning)
    if args.traceback:
        os.environ["TRAINBENCH_TRACEBACK"] = "1"
    for plugin in args.plugin:
        load_plugin(plugin)
    cfg = PreflightConfig(
        workloads=tuple(args.workload or ()), gpu=args.gpu, size=args.size, precision=args.precision,
        batch_size=args.batch_size, data_dir=args.data_dir, num_workers=args.num_workers,
        grad_accum=args.grad_accum, overfit_steps=args.overfit_steps, seed=args.seed,
        plugins=tuple(str(Path(p).resolve()) if p.endswith(".py") else p for p in args.plugin),
        pipeline=not args.no_pipeline, read_probe=not args.no_read_probe,
        hardware=args.hardware, burn_s=0.0 if args.skip_burn else args.burn_s, peak=not args.no_peak,
        expected_nvlinks=args.expect_nvlinks,
    )
    if not Path(cfg.data_dir).is_dir():
        raise InputError(f"--data-dir={cfg.data_dir}: no such directory; create it or pass another")
    get_precision(cfg.precision).check(resolve_device("auto"))  # e.g. tf32 on a CPU: exit 2 naming the flag
    result = run_preflight(cfg)
    f = result.facts
    title = (f"trainbench preflight: device {result.device}, profile {result.profile}, size {result.size}, "
             f"{cfg.precision}; torch {f.torch_version}")
    print(format_checklist(result.checks, title))
    if result.tier is not None and result.tier.peaks:
        print(format_peaks(result.tier.peaks))
    if args.results:
        env = capture_environment(result.profile)
        if result.tier is not None and result.tier.peaks:
            env["matmul_peak"] = result.tier.peak_environment()
        records = to_records(result.checks, "trainbench preflight", size=result.size, precision=cfg.precision,
                             gpu=result.profile)
        path = write_results(args.results, env, records)
        print(f"results: {path}")
    if args.fail_on == "warn" and any(c.status == WARN for c in result.checks):
        return 1
    return result.exit_code
