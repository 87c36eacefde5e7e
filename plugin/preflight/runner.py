"""`run_preflight`: gather the facts, judge the environment, estimate memory, run the pipeline
items for each workload, and return the checklist."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils.data import default_collate

from ..catalog import GpuSpec, detect_gpu, get_gpu
from ..harness.run import auto_workers
from .check import Check
from .environment import EnvSettings, environment_checks
from .facts import Facts, gather_facts
from .memory import MemoryFit, check_memory, estimate_fit
from .pipeline import PipelineConfig, pipeline_checks
from ..workloads import Workload, get_workload, workload_names

__all__ = ["Preflight", "PreflightConfig", "PreflightResult", "run_preflight", "CPU_BATCH"]

CPU_BATCH = 8  # largest default micro-batch on a CPU: enough for BatchNorm and accumulation by 2


@dataclass(frozen=True)
class PreflightConfig:
    workloads: tuple[str, ...] = ()  # empty = every registered workload
    gpu: str = "auto"  # --gpu profile the run will be labelled with ("auto", "cpu" or a catalog name)
    size: str | None = None  # None = "full" on a GPU (the real footprint), "tiny" on a CPU
    precision: str = "fp32"
    # micro-batch; None = each workload's default for the size, capped at CPU_BATCH on a CPU (there
    # the tiny presets check code paths, not capacity)
    batch_size: int | None = None
    data_dir: str = "."  # where data and checkpoints will live: disk space and read throughput
    num_workers: int | None = None  # loader workers; None = the harness's choice for the device
    grad_accum: int = 2  # k of the accumulation check
    overfit_steps: int = 25
    seed: int = 0
    plugins: tuple[str, ...] = ()  # modules / .py files registering user workloads
    pipeline: bool = True  # run the pipeline items (False: environment and memory only)
    read_probe: bool = True  # measure the data directory's read throughput
    hardware: bool = False  # the hardware tier: NVML health items, burn test, matmul peak
    burn_s: float | None = None  # burn seconds; None = about 60 on a GPU, 3 on a CPU; 0 = skip
    peak: bool = True  # measure the achievable matmul peak (hardware tier)
    expected_nvlinks: int | None = None  # NVLinks per GPU; None = what NVML reports for the device


@dataclass
class PreflightResult:
    config: PreflightConfig
    facts: Facts
    device: torch.device
    profile: str  # the --gpu profile the checks ran against
    size: str
    checks: list[Check] = field(default_factory=list)
    tier: Any = None  # HardwareTier when the hardware tier ran

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def _batch_bytes(wl: Workload, size: str, batch: int, seed: int) -> int | None:
    """Bytes of one collated batch; None when the data set cannot make one (the loader item says why)."""
    try:
        data = wl.dataset(size, batch, seed)
        b = default_collate([data[i] for i in range(batch)])
        return sum(v.numel() * v.element_size() for v in b.values() if torch.is_tensor(v))
    except Exception:
        return None


def _checkpoint_bytes(wl: Workload, size: str) -> int | None:
    """Weights + up to two optimizer buffers (Adam), from shapes on the meta device; None when the
    model cannot be built there (the pipeline items then report the checkpoint's real size)."""
    try:
        with torch.device("meta"):
            model = wl.model(size)
    except Exception:
        return None
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    return 3 * params + buffers


def _largest(values) -> int | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _spec(cfg: PreflightConfig, facts: Facts) -> GpuSpec | None:
    if cfg.gpu not in ("auto", "cpu"):
        return get_gpu(cfg.gpu)
    if cfg.gpu == "auto" and facts.cuda_available and facts.gpus:
        return detect_gpu(facts.gpus[0].name, facts.gpus[0].memory_bytes)
    return None


class Preflight:
    """The resolved settings of one preflight run; `environment()` and `workload(name)` give the
    items (bench/test_preflight.py runs them as separate tests)."""

    def __init__(self, cfg: PreflightConfig, facts: Facts | None = None):
        names = list(cfg.workloads) or workload_names()
        self.cfg = cfg
        self.workloads = {n: get_workload(n) for n in names}  # unknown name: InputError listing the known ones
        self.facts = facts or gather_facts(cfg.data_dir, read_probe=cfg.read_probe)
        cuda = self.facts.cuda_available and cfg.gpu != "cpu"
        self.device = torch.device("cuda:0" if cuda else "cpu")
        self.size = cfg.size or ("full" if cuda else "tiny")
        self.spec = _spec(cfg, self.facts)
        self.profile = self.spec.name if self.spec else (self.facts.gpus[0].name if cuda and self.facts.gpus else "cpu")
        self.workers = auto_workers(self.device) if cfg.num_workers is None else cfg.num_workers
        self.batches = {n: cfg.batch_size or self._default_batch(wl) for n, wl in self.workloads.items()}
        self.tier = None  # HardwareTier after hardware()

    def _default_batch(self, wl: Workload) -> int:
        batch = wl.default_batch_size(self.size)
        return batch if self.device.type == "cuda" else min(batch, CPU_BATCH)

    def environment(self) -> list[Check]:
        wls = self.workloads.values()
        settings = EnvSettings(
            gpu=self.cfg.gpu, precision=self.cfg.precision, num_workers=self.workers,
            batch_bytes=_largest(_batch_bytes(wl, self.size, self.batches[wl.name], self.cfg.seed) for wl in wls),
            checkpoint_bytes=_largest(_checkpoint_bytes(wl, self.size) for wl in wls),
        )
        return environment_checks(self.facts, settings)

    def memory(self, name: str, precision: str | None = None) -> Check:
        wl, batch, precision = self.workloads[name], self.batches[name], precision or self.cfg.precision
        try:
            measured = self.facts.gpu_memory if self.device.type == "cuda" else None
            fit = estimate_fit(wl, self.size, precision, batch, self.spec, measured)
        except Exception as exc:  # an estimator that cannot trace a user model must not stop the checklist
            spec = self.spec
            fit = MemoryFit(spec.name if spec else "?", batch, None, spec.memory_bytes if spec else None,
                            method=f"estimate failed: {type(exc).__name__}: {exc}")
        return check_memory(fit, name, precision)

    def pipeline(self, name: str, precision: str | None = None) -> list[Check]:
        cfg = self.cfg
        return pipeline_checks(PipelineConfig(
            workload=name, size=self.size, precision=precision or cfg.precision, batch_size=self.batches[name],
            device=str(self.device), seed=cfg.seed, num_workers=self.workers, grad_accum=cfg.grad_accum,
            overfit_steps=cfg.overfit_steps, plugins=cfg.plugins,
        ))

    def hardware(self) -> list[Check]:
        """The hardware tier's items; the measurements stay in `self.tier` (peaks for the results file)."""
        from .hardware_tier import hardware_tier

        self.tier = hardware_tier(self.cfg)
        return self.tier.checks

    def workload(self, name: str, precision: str | None = None) -> list[Check]:
        checks = [self.memory(name, precision)]
        if self.cfg.pipeline:
            checks.extend(self.pipeline(name, precision))
        return checks


def run_preflight(cfg: PreflightConfig, facts: Facts | None = None) -> PreflightResult:
    p = Preflight(cfg, facts)
    result = PreflightResult(cfg, p.facts, p.device, p.profile, p.size, p.environment())
    if cfg.hardware:
        result.checks.extend(p.hardware())
        result.tier = p.tier
    for name in p.workloads:
        result.checks.extend(p.workload(name))
    return result
