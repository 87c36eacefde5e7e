"""Command-line options of the pytest plugin: one "trainbench" group, every value parsed by a
`type=` function from `cli.types` that names the flag and lists what is valid; and the two
readers that turn the options into domain settings (storage, prices)."""

from __future__ import annotations

import argparse
import os
from typing import Any

import pytest

from ..catalog import gpu_names
from ..catalog.prices import PRICE_MODES, PRICES_ENV, PRICES_MODE_ENV, PriceRow, load_prices, read_price_file
from ..cli.types import comma_list, domain, existing_path, gpu, int_list, nonneg_int, number, positive_int, yes_no
from ..data.backends import parse_storage_list
from ..data.context import StorageSettings
from ..distributed.topology import parse_topology_list
from ..harness.compile import COMPILE_MODES
from ..harness.finetune import FINETUNE_MODES
from ..harness.precision import PRECISIONS

__all__ = ["add_options", "prices_for", "settings_from_config", "DEFAULT_DIST_TIMEOUT_S", "time_floors"]

DEFAULT_DIST_TIMEOUT_S = 900.0  # one torchrun launch, start-up included; a hang fails after this
# Time floors of warm-up and measured window, seconds. CPU: a 2 s window instead of 10 steps
# (~0.1 s); the 6 windows of the default `pytest bench/` spent 22 s in warm-up + window together
# (measured, loaded 2-core box), a small share of the suite. GPU: clocks and autotuners settle
# in seconds; 20 s of steps spans the slow drifts of a shared host.
CPU_MIN_WARMUP_S, CPU_MIN_WINDOW_S = 0.5, 2.0
GPU_MIN_WARMUP_S, GPU_MIN_WINDOW_S = 10.0, 20.0


FLOOR_ENV = {"--min-warmup-s": "TRAINBENCH_MIN_WARMUP_S", "--min-window-s": "TRAINBENCH_MIN_WINDOW_S"}


def _floor(config: Any, flag: str, default: float) -> float:
    """The option, else its environment variable (the project's own tests set 0), else default."""
    value = config.getoption(flag)
    if value is not None:
        return value
    env = os.environ.get(FLOOR_ENV[flag])
    if env is None:
        return default
    try:
        return number(FLOOR_ENV[flag], 0, low_open=False)(env)
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"${FLOOR_ENV[flag]}: {exc}; unset it or give seconds >= 0") from None


def time_floors(config: Any, on_gpu: bool) -> tuple[float, float]:
    """(min warm-up s, min window s): the options, else $TRAINBENCH_MIN_*_S, else the device's defaults."""
    return (_floor(config, "--min-warmup-s", GPU_MIN_WARMUP_S if on_gpu else CPU_MIN_WARMUP_S),
            _floor(config, "--min-window-s", GPU_MIN_WINDOW_S if on_gpu else CPU_MIN_WINDOW_S))


def _price_file(value: str) -> str:
    read_price_file(value)  # validated where it enters
    return value


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("trainbench", "pytest-trainbench: training benchmarks")
    group.addoption("--gpu", type=gpu(), default="auto",
                    help="catalog profile of the device the numbers belong to (drives MFU and cost); "
                         "'auto' detects it. A profile that contradicts the detected device is an error. "
                         f"Known: auto, {', '.join(gpu_names())}")
    group.addoption("--precision", type=comma_list("--precision", lambda: list(PRECISIONS)), default=None,
                    help="comma list -> one benchmark per precision: fp32, tf32, bf16, fp16 (default fp32)")
    group.addoption("--finetune", type=comma_list("--finetune", lambda: list(FINETUNE_MODES)), default=None,
                    help="comma list -> one benchmark per fine-tuning mode: full, lora (LoRA on workloads "
                         "that define adapter targets, e.g. llama-1b; others skip it). Default full")
    group.addoption("--compile", type=comma_list("--compile", lambda: list(COMPILE_MODES)), default=None,
                    help="comma list -> one benchmark per torch.compile mode: none, default, max-autotune, "
                         "regional (each repeated block compiled alone). compile_s is timed apart from the "
                         "window. Default none")
    group.addoption("--activation-checkpointing", action="store_true", default=False,
                    help="recompute each repeated block in backward (torch.utils.checkpoint) instead of "
                         "keeping its activations")
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
    group.addoption("--min-warmup-s", type=number("--min-warmup-s", 0, low_open=False), default=None,
                    help="warm-up also lasts at least this many seconds; also $TRAINBENCH_MIN_WARMUP_S "
                         f"(default {CPU_MIN_WARMUP_S:g} on CPU, {GPU_MIN_WARMUP_S:g} on GPU)")
    group.addoption("--min-window-s", type=number("--min-window-s", 0, low_open=False), default=None,
                    help="the measured window also lasts at least this many seconds, steps beyond --steps "
                         f"included; also $TRAINBENCH_MIN_WINDOW_S (default {CPU_MIN_WINDOW_S:g} on CPU, {GPU_MIN_WINDOW_S:g} on GPU)")
    group.addoption("--grad-accum", type=positive_int("--grad-accum"), default=1,
                    help="micro-batches per optimizer step (gradient accumulation)")
    group.addoption("--seed", type=nonneg_int("--seed"), default=0, help="seed for models and data")
    group.addoption("--weights", type=existing_path("--weights"), default=None,
                    help="local Hugging Face-format checkpoint directory to start from (bert-base, gpt-small); "
                         "nothing is downloaded")
    group.addoption("--trainbench-results", default=None, metavar="PATH",
                    help="results file to write (default reports/results/<time>-<host>.json)")
    group.addoption("--trainbench-resume", type=existing_path("--trainbench-resume"), default=None,
                    metavar="PATH",
                    help="continue the sweep recorded in this results file: benchmarks finished there are "
                         "skipped, the rest run and are appended to it (same machine type and --gpu only)")
    group.addoption("--trainbench-report", default="reports/latest.md", metavar="PATH",
                    help="markdown summary written at session end (default reports/latest.md)")
    group.addoption("--storage", type=domain("--storage", parse_storage_list), default=None,
                    help="comma list of storage backends -> one storage benchmark per backend: synthetic, memory, "
                         "local, s3, gp3, st1, cloud-ssd, essd-pl0..essd-pl3, throttle:<MB/s>,<IOPS>, and any of "
                         "them with +cache (e.g. s3+cache). Default: local for bench/test_storage.py; "
                         "training benchmarks elsewhere use synthetic data")
    group.addoption("--num-workers", type=int_list("--num-workers", 0), default=None,
                    help="loader worker processes; a comma list sweeps them in the storage benchmarks "
                         "(default: 1 on CPU, 0,2,4,8 on GPU; training elsewhere: the first value, or auto)")
    group.addoption("--prefetch-factor", type=positive_int("--prefetch-factor"), default=None,
                    help="batches in flight per loader worker (torch default 2)")
    group.addoption("--pin-memory", type=yes_no("--pin-memory"), default=None,
                    help="page-locked host batches, yes/no (default: yes on CUDA)")
    group.addoption("--persistent-workers", action="store_true", default=False,
                    help="keep loader workers alive across epochs")
    group.addoption("--data-dir", default=None, metavar="DIR",
                    help="directory for the shards of local and throttled backends "
                         "(default .trainbench-cache/data under the rootdir)")
    group.addoption("--s3-endpoint", default=None, metavar="URL",
                    help="S3 endpoint for --storage=s3 (credentials from AWS_* variables); default: a moto "
                         "server started on a free loopback port for the session")
    group.addoption("--s3-bucket", default="trainbench", metavar="NAME",
                    help="bucket holding the shards on S3 (default trainbench)")
    group.addoption("--skip-corrupt", action="store_true", default=False,
                    help="skip and count corrupt or truncated samples instead of failing on the first")
    group.addoption("--topology", type=domain("--topology", parse_topology_list), default=None,
                    help="comma list -> one distributed benchmark per topology: default, pcie "
                         "(NCCL_P2P_DISABLE=1), no-rdma (NCCL_IB_DISABLE=1), socket (TCP only), ring, tree "
                         "(NCCL_ALGO), or env:KEY=VAL,... with NCCL_* settings (default: default). "
                         "NCCL-only settings skip on CPU (gloo)")
    group.addoption("--nproc", type=positive_int("--nproc"), default=None,
                    help="ranks per node for the distributed benchmarks (default: the GPU count, 2 on CPU)")
    group.addoption("--ddp-bucket-mb", type=number("--ddp-bucket-mb"), default=25.0,
                    help="DistributedDataParallel gradient bucket size in MB (torch default 25)")
    group.addoption("--dist-timeout", type=number("--dist-timeout"), default=DEFAULT_DIST_TIMEOUT_S,
                    help=f"seconds one torchrun launch may take before it is killed and fails "
                         f"(default {DEFAULT_DIST_TIMEOUT_S:g})")
    group.addoption("--burn-s", type=number("--burn-s", low_open=False), default=None, metavar="SECONDS",
                    help="burn test length in the preflight hardware tier (default 60 on a GPU, 3 on a CPU; 0 skips)")
    group.addoption("--price-file", type=domain("--price-file", _price_file), default=None, metavar="CSV",
                    help=f"instance prices (same columns as the packaged prices.csv) merged over the packaged "
                         f"catalog for cost per epoch; also ${PRICES_ENV}")
    group.addoption("--price-mode", choices=PRICE_MODES, default=None,
                    help="merge the price file over the packaged catalog (default) or replace it; "
                         f"also ${PRICES_MODE_ENV}")

    group.addoption("--tuning", choices=("tuned", "plain"), default="tuned",
                    help="tuned (default): fused optimizers, and channels_last + cudnn.benchmark for CNNs on a GPU, "
                         "as a tuned loop runs; plain: the model and optimizer as the workload builds them")
    group.addoption("--trainbench-progress", choices=("auto", "on", "off"), default="auto",
                    help="the plan line and progress inside benchmarks (phase, step k/N, s/step, time left): "
                         "auto = only when the output is a terminal (default), on = always, off = never")
    group.addoption("--trainbench-benchmark-table", action="store_true", default=False,
                    help="also print pytest-benchmark's own timing table (off: the trainbench summary "
                         "shows the same step times)")
    group.addoption("--drills", action="store_true", default=False,
                    help="also run the convergence and preemption drills (marker drill; minutes each, so a plain "
                         "`pytest bench/` leaves them out; -m drill, -k, or naming their file selects them too)")
    group.addoption("--convergence-seeds", type=positive_int("--convergence-seeds"), default=5,
                    help="seeded runs per configuration in bench/test_convergence.py (olympic mean, CV; default 5)")
    group.addoption("--convergence-max-steps", type=positive_int("--convergence-max-steps"), default=1000,
                    help="step budget per convergence run; past it the run is 'not reached' (default 1000)")
    group.addoption("--convergence-margin", type=number("--convergence-margin"), default=0.10,
                    help="target = loss floor x (1 + margin) (default 0.10)")

    from .gate import add_options as add_gate_options

    add_gate_options(group)  # --trainbench-baseline, --trainbench-max-regression, ...


def settings_from_config(config: Any) -> StorageSettings:
    opt = config.getoption
    return StorageSettings(
        cache_root=str(config.rootpath / ".trainbench-cache"),
        data_dir=opt("--data-dir"),
        s3_endpoint=opt("--s3-endpoint"),
        s3_bucket=opt("--s3-bucket"),
        skip_corrupt=opt("--skip-corrupt"),
    )


def prices_for(config) -> list[PriceRow]:
    """The price rows a pytest session uses (InputError on a bad $TRAINBENCH_PRICES file)."""
    return load_prices(config.getoption("price_file", None), config.getoption("price_mode", None))
