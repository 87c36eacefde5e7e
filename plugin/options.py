"""Command-line options of the pytest plugin: one "trainbench" group; values parsed by `type=`
functions that name the flag and list what is valid (STYLE.md 9)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

import pytest

from plugin.catalog import gpu_names
from plugin.option_types import nonneg_int, positive_int
from plugin.cost.options import add_options as add_price_options
from plugin.data.options import add_options as add_data_options
from plugin.distributed.options import add_options as add_distributed_options
from plugin.errors import InputError
from plugin.harness.precision import PRECISIONS

__all__ = ["add_options", "comma_list", "parse_gpu", "positive_int", "nonneg_int"]


def comma_list(flag: str, valid: Callable[[], list[str]] | None = None) -> Callable[[str], list[str]]:
    def parse(value: str) -> list[str]:
        items = [v.strip() for v in value.split(",") if v.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"{flag} needs at least one value")
        if valid is not None:
            known = valid()
            bad = [v for v in items if v.lower() not in known]
            if bad:
                raise argparse.ArgumentTypeError(
                    f"{flag}: unknown value(s) {', '.join(bad)}; supported: {', '.join(known)}"
                )
            items = [v.lower() for v in items]
        return list(dict.fromkeys(items))  # de-duplicated, order kept

    parse.__name__ = flag  # argparse names the type in its message
    return parse


def parse_gpu(value: str) -> str:
    v = value.strip().lower()
    if v == "auto" or v in gpu_names():
        return v
    raise argparse.ArgumentTypeError(f"unknown GPU --gpu={value}; known: auto, {', '.join(gpu_names())}")


def _existing_path(flag: str) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if not Path(value).exists():
            raise argparse.ArgumentTypeError(f"{flag}={value}: no such file or directory")
        return value

    parse.__name__ = flag
    return parse


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("trainbench", "pytest-trainbench: training benchmarks")
    group.addoption("--gpu", type=parse_gpu, default="auto",
                    help="catalog profile of the device the numbers belong to (drives MFU and cost); "
                         "'auto' detects it. A profile that contradicts the detected device is an error. "
                         f"Known: auto, {', '.join(gpu_names())}")
    group.addoption("--precision", type=comma_list("--precision", lambda: list(PRECISIONS)), default=None,
                    help="comma list -> one benchmark per precision: fp32, tf32, bf16, fp16 (default fp32)")
    group.addoption("--workload", type=comma_list("--workload"), default=None,
                    help="comma list of workloads (default: every registered workload)")
    group.addoption("--size", choices=("tiny", "full"), default=None,
                    help="model preset: tiny (seconds on a CPU) or full (the published configuration); "
                         "default tiny on CPU, full on a GPU")
    group.addoption("--batch-size", type=positive_int("--batch-size"), default=None,
                    help="micro-batch size per device (default: the workload's for the size)")
    group.addoption("--steps", type=positive_int("--steps"), default=None,
                    help="measured optimizer steps (default 10 on CPU, 50 on GPU)")
    group.addoption("--warmup", type=nonneg_int("--warmup"), default=None,
                    help="unmeasured warm-up steps first (default 3 on CPU, 10 on GPU)")
    group.addoption("--grad-accum", type=positive_int("--grad-accum"), default=1,
                    help="micro-batches per optimizer step (gradient accumulation)")
    group.addoption("--seed", type=nonneg_int("--seed"), default=0, help="seed for models and data")
    group.addoption("--weights", type=_existing_path("--weights"), default=None,
                    help="local Hugging Face-format checkpoint directory to start from (bert-base, gpt-small); "
                         "nothing is downloaded")
    group.addoption("--trainbench-results", default=None, metavar="PATH",
                    help="results file to write (default reports/results/<time>-<host>.json)")
    group.addoption("--trainbench-report", default="reports/latest.md", metavar="PATH",
                    help="markdown summary written at session end (default reports/latest.md)")
    add_data_options(group)  # --storage, --num-workers, --data-dir, --s3-endpoint, ...
    add_distributed_options(group)  # --topology, --nproc, --ddp-bucket-mb, --dist-timeout
    add_price_options(group)  # --price-file, --price-mode

    from plugin.gate.pytest_gate import add_options as add_gate_options

    add_gate_options(group)  # --trainbench-baseline, --trainbench-max-regression, ...


def usage_error(exc: InputError | argparse.ArgumentTypeError) -> pytest.UsageError:
    return pytest.UsageError(str(exc))
