"""The rows of the instance-selection report: one per (workload group, priced instance).

Each row says where its throughput comes from: "measured on <gpu>" when a results file holds a
run of the same workload, size and precision on that GPU profile, otherwise "projected (<kind>
efficiency)" from the analytic step cost (select/projected.py), with the full method in
`CostRow.method`. Devices that were measured but have no price (a CPU, an unpriced GPU) still
get a row: measured, with cost n/a. A published figure for the same GPU, count and configuration
sits beside, never in place of, ours.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..catalog.gpus import GpuSpec, gpu_catalog
from ..catalog.prices import PriceRow
from ..cost.epoch import cost_per_epoch, epoch_hours
from ..cost.fit import Fit, ModeFit, check_fit, fit_modes, mode_estimates
from ..catalog.published import published_for, published_text
from ..cost.memory import MemoryEstimate
from ..cost.step import trace_error, traced_memory
from ..cost.spot import SpotAssumptions, spot_estimate
from ..errors import InputError
from ..records.results import Results
from .projected import project_instance

__all__ = [
    "Measurement",
    "CheckpointTiming",
    "CostRow",
    "Group",
    "SelectConfig",
    "collect_measurements",
    "build_groups",
]

THROUGHPUT_KINDS = ("training", "ddp")
ASSUMED_WRITE_BYTES_PER_S = 200e6  # checkpoint write when none was measured: a cloud network disk


@dataclass(frozen=True)
class SelectConfig:
    workload: str | None = None  # only this workload (None: every workload measured)
    size: str | None = None  # target preset for projections (None: the measured one)
    precision: str | None = None  # target precision (None: the measured one)
    spot: bool = False  # rank by expected spot cost instead of on-demand
    clouds: tuple[str, ...] | None = None  # only these clouds (None: all)
    spot_assumptions: SpotAssumptions = field(default_factory=SpotAssumptions)
    ckpt_save_s: float | None = None  # user-given checkpoint write time (overrides records)


@dataclass(frozen=True)
class Measurement:
    workload: str
    size: str
    precision: str
    batch_size: int | None
    gpu: str  # catalog profile, "cpu", or the raw device name
    world_size: int
    samples_per_s_per_gpu: float  # median over the runs of this configuration
    runs: int
    origin: str  # results file(s)
    flops_per_sample: float | None  # from the record when the workload is not registered
    peak_mem_bytes: float | None = None  # median CUDA max_memory_allocated (never process RSS)


@dataclass(frozen=True)
class CheckpointTiming:
    save_s: float
    load_s: float
    label: str  # "measured (resume record)", "scaled from ...", "assumed ..."


@dataclass
class CostRow:
    cloud: str
    region: str
    instance_type: str
    gpu: str
    gpu_count: int
    measured: bool
    basis: str  # "measured on t4" / "projected from cpu (...)"
    samples_per_s: float | None  # whole instance
    epoch_hours: float | None
    on_demand_usd: float | None
    spot_usd: float | None  # expected, interruptions included
    spot_overhead: float | None  # spot wall time / work - 1
    ckpt_interval_s: float | None  # Daly's recommended compute time between checkpoints
    fit: Fit | None
    flag: str  # price and GPU-spec flags, "" when none
    price_source: str
    # optional detail (later issues add fields here, all with defaults)
    method: str = ""  # how samples_per_s was obtained, in full
    published: str | None = None  # published figure for this GPU and count, e.g. "1,582 (lambda 2023, fp16)"
    efficiency_kind: str | None = None  # projected rows: measured / published / borrowed / assumed
    bound: str | None = None  # projected rows: compute / memory

    @property
    def basis_kind(self) -> str:
        """measured / projected / n-a."""
        if self.measured:
            return "measured"
        return "projected" if self.samples_per_s is not None else "n-a"
    mode_fits: list[ModeFit] = field(default_factory=list)  # issue 17: which training modes fit (estimate)

    def rank_cost(self, spot: bool) -> float | None:
        return self.spot_usd if spot else self.on_demand_usd


@dataclass
class Group:
    workload: str
    size: str
    precision: str
    batch_size: int | None
    epoch_samples: int | None
    epoch_source: str
    measurements: list[Measurement]
    searches: list  # `memory` records of a largest-batch search for this workload
    rows: list[CostRow]
    checkpoint: CheckpointTiming
    memory: MemoryEstimate | None
    notes: list[str]
    modes: dict[str, MemoryEstimate] = field(default_factory=dict)  # issue 17: estimate per training mode
    columns: dict[str, list[str]] = field(default_factory=dict)  # extra column -> one cell per row


def _device_of(record, env) -> str:
    if record.gpu:
        return record.gpu.lower()
    if env.get("gpu_profile"):
        return str(env["gpu_profile"]).lower()
    return "cpu" if not env.get("gpu_name") else str(env["gpu_name"])


def collect_measurements(results: Sequence[Results]) -> tuple[list[Measurement], list, list]:
    """Throughput measurements (median per configuration), resume records, memory records."""
    buckets: dict[tuple, list] = {}
    resumes, searches = [], []
    for res in results:
        for rec in res.records:
            if rec.kind == "resume" and rec.status == "passed":
                resumes.append(rec)
            if rec.kind == "memory" and rec.config.get("largest_batch") is not None:
                searches.append(rec)
            sps = rec.metrics.get("samples_per_s")
            if rec.kind not in THROUGHPUT_KINDS or rec.status != "passed" or not rec.workload or not sps:
                continue
            world = max(1, int(rec.world_size or 1))
            device = _device_of(rec, res.environment)
            key = (rec.workload, rec.size or "full", rec.precision or "fp32", rec.batch_size, device, world)
            flops = rec.metrics.get("model_flops_per_s")
            peak = rec.metrics.get("peak_mem_bytes")
            if rec.config.get("peak_mem_kind", "cuda_allocated") != "cuda_allocated" or key[4] == "cpu":
                peak = None  # process RSS is a different quantity: never compared with device memory
            flops_per_sample = flops / sps if flops else None
            buckets.setdefault(key, []).append((sps / world, flops_per_sample, str(res.path or "?"), peak))
    out = []
    for (w, size, prec, batch, gpu, world), vals in sorted(buckets.items(), key=lambda kv: tuple(map(str, kv[0]))):
        out.append(Measurement(
            w, size, prec, batch, gpu, world,
            samples_per_s_per_gpu=statistics.median(v[0] for v in vals), runs=len(vals),
            origin=", ".join(sorted({v[2] for v in vals})),
            flops_per_sample=next((v[1] for v in vals if v[1]), None),
            peak_mem_bytes=statistics.median(peaks) if (peaks := [v[3] for v in vals if v[3]]) else None,
        ))
    return out, resumes, searches


def _workload(name):
    from ..workloads import get_workload

    try:
        return get_workload(name)
    except InputError:
        return None


def _memory(name: str, size: str, precision: str) -> MemoryEstimate | None:
    return traced_memory(name, size, precision)


def _checkpoint(resumes, workload: str, size: str, est: MemoryEstimate | None, cfg: SelectConfig) -> CheckpointTiming:
    a = cfg.spot_assumptions
    ckpt_bytes = None if est is None or est.state_bytes is None else est.param_bytes + (est.optimizer_bytes or 0)
    if cfg.ckpt_save_s:
        return CheckpointTiming(cfg.ckpt_save_s, cfg.ckpt_save_s, "given (--ckpt-save-s)")
    if a.measured_save_s:  # goodput records: the store a spot job checkpoints to
        return CheckpointTiming(a.measured_save_s, a.measured_load_s or a.measured_save_s, a.source)
    mine = [r for r in resumes if r.workload == workload and r.metrics.get("ckpt_save_s")]
    same = [r for r in mine if (r.size or "full") == size]
    if same:
        save = statistics.median(r.metrics["ckpt_save_s"] for r in same)
        loads = [r.metrics["ckpt_load_s"] for r in same if r.metrics.get("ckpt_load_s")]
        load = statistics.median(loads) if loads else save
        return CheckpointTiming(save, load, f"measured (resume record{'s' if len(same) > 1 else ''}, {size})")
    rated = [r for r in mine if r.metrics.get("ckpt_bytes")]
    if rated and ckpt_bytes:
        rate = statistics.median(r.metrics["ckpt_bytes"] / r.metrics["ckpt_save_s"] for r in rated)
        save = ckpt_bytes / rate
        label = f"scaled: {ckpt_bytes / 1e9:.2f} GB at the measured {rate / 1e6:.0f} MB/s write"
        return CheckpointTiming(save, save, label)
    if ckpt_bytes:
        save = max(1.0, ckpt_bytes / ASSUMED_WRITE_BYTES_PER_S)
        label = f"assumed: {ckpt_bytes / 1e9:.2f} GB at {ASSUMED_WRITE_BYTES_PER_S / 1e6:.0f} MB/s"
        return CheckpointTiming(save, save, label)
    return CheckpointTiming(a.ckpt_save_s, a.ckpt_save_s, f"assumed: {a.ckpt_save_s:g} s (no checkpoint size known)")


def _flags(price: PriceRow | None, spec: GpuSpec | None, measured: bool) -> str:
    flags = []
    if price is not None and price.flag:
        flags.append(price.flag)
    if spec is not None and not measured and spec.suspect:
        flags.append(f"GPU spec {spec.verified}")
    return "; ".join(flags)


def build_groups(results: Sequence[Results], prices: Iterable[PriceRow], cfg: SelectConfig) -> list[Group]:
    measurements, resumes, searches = collect_measurements(results)
    if cfg.workload:
        measurements = [m for m in measurements if m.workload == cfg.workload]
        if not measurements:
            raise InputError(f"--workload={cfg.workload}: no passed training record of it in the results files")
    if not measurements:
        raise InputError("no passed training record with samples_per_s in the results files; "
                         "run `pytest bench/` first and pass its results file")
    prices = [p for p in prices if cfg.clouds is None or p.cloud in cfg.clouds]
    if cfg.clouds and not prices:
        raise InputError(f"--clouds={','.join(cfg.clouds)}: no price rows for these clouds")
    catalog = gpu_catalog()
    targets = sorted({(m.workload, cfg.size or m.size, cfg.precision or m.precision) for m in measurements})
    groups = []
    for workload, size, precision in targets:
        candidates = [m for m in measurements if m.workload == workload]
        group = _group(workload, size, precision, candidates, resumes, prices, catalog, cfg)
        group.searches = [r for r in searches if r.workload == workload and (r.size or "full") == size
                          and (r.precision or "fp32") == precision]
        groups.append(group)
    return groups


def _group(workload, size, precision, candidates, resumes, prices, catalog, cfg) -> Group:
    w = _workload(workload)
    est = _memory(workload, size, precision)
    amp_est = _memory(workload, size, "bf16") if precision not in ("bf16", "fp16") else None
    same = [m for m in candidates if m.size == size and m.precision == precision]
    batch = (same[0].batch_size if same else None) or _default_batch(w, size)
    epoch = w.epoch_samples if w else None
    notes = []
    if w is None:
        notes.append(f"workload {workload!r} is not registered here: epoch size and memory fit unknown")
    if est is None and trace_error(workload, size, precision):
        notes.append(f"memory estimate unavailable ({trace_error(workload, size, precision)}): fit n/a")
    if size == "tiny" and not cfg.size:
        notes.append("tiny preset: its GPU projections ignore kernel-launch and latency limits that dominate "
                     "tiny models; pass --size full for the published configuration")
    recorded_flops = next((m.flops_per_sample for m in same if m.flops_per_sample), None)
    if not any(p.size == size for p in _published_any(workload)) and _published_any(workload):
        sizes = sorted({p.size for p in _published_any(workload)})
        notes.append(f"published figures for {workload} exist at size {', '.join(sizes)} "
                     f"(pass --size {sizes[0]} to see them beside these rows)")
    ckpt = _checkpoint(resumes, workload, size, est, cfg)
    modes = _mode_estimates(w, size, precision)
    a = cfg.spot_assumptions
    rows: list[CostRow] = []

    def make_row(price: PriceRow | None, gpu: str, count: int, per_gpu_sps, measured, basis, spec,
                 scale: float = 1.0, **detail) -> CostRow:
        fit = check_fit(est, spec, batch, amp_est) if (est and spec and batch and spec.memory_bytes) else None
        sps = per_gpu_sps * count * scale if per_gpu_sps else None
        hours = epoch_hours(epoch, sps) if (sps and epoch) else None
        on_demand = spot = overhead = interval = None
        if hours is not None and price is not None:
            on_demand = cost_per_epoch(epoch, sps, price.price_per_gpu(False), count)
            restart = a.restart_s if a.restart_measured else a.restart_s + ckpt.load_s  # measured: load included
            s = spot_estimate(hours * 3600, price.price_per_gpu(True), count, ckpt.save_s, a.mtbi_s, restart)
            spot, overhead, interval = s.cost_usd, s.overhead, s.interval_s
        return CostRow(
            cloud=price.cloud if price else "-", region=price.region if price else "-",
            instance_type=price.instance_type if price else "(measured machine, no price)",
            gpu=gpu, gpu_count=count, measured=measured, basis=basis, samples_per_s=sps,
            epoch_hours=hours, on_demand_usd=on_demand, spot_usd=spot, spot_overhead=overhead,
            ckpt_interval_s=interval, fit=fit, flag=_flags(price, spec, measured),
            price_source=price.source if price else "",
            published=published_text(_published(workload, size, precision, gpu, count)), **detail,
            mode_fits=fit_modes(modes, spec, batch) if (modes and spec and batch and spec.memory_bytes) else [],
        )

    priced = set()
    for price in prices:
        spec = catalog.get(price.gpu)
        mine = [m for m in same if m.gpu == price.gpu]
        if mine:
            # the run on as many GPUs as the instance has, else the largest that fits in it
            n = price.gpu_count
            m = max(mine, key=lambda m: (m.world_size == n, m.world_size <= n, m.world_size, m.runs))
            basis = f"measured on {m.gpu}"
            if price.gpu_count != m.world_size and price.gpu_count > 1:
                basis += (f" ({m.world_size} GPU{'s' if m.world_size > 1 else ''}; per-GPU rate x{price.gpu_count} "
                          f"assumes linear scaling)")
            rows.append(make_row(price, price.gpu, price.gpu_count, m.samples_per_s_per_gpu, True, basis, spec))
        else:
            p = project_instance(workload, size, precision, batch or 1, spec, price.gpu_count, candidates,
                                 recorded_flops)
            rows.append(make_row(price, price.gpu, price.gpu_count, p.per_gpu, False, p.basis, spec, p.scale,
                                 method=p.method, efficiency_kind=p.efficiency_kind, bound=p.bound))
        priced.add(price.gpu)
    for m in same:
        if m.gpu not in priced:
            spec = catalog.get(m.gpu)
            basis = f"measured on {m.gpu}"
            rows.append(make_row(None, m.gpu, m.world_size, m.samples_per_s_per_gpu, True, basis, spec))
    rows.sort(key=lambda r: _rank_key(r, cfg.spot))
    return Group(
        workload=workload, size=size, precision=precision, batch_size=batch, epoch_samples=epoch,
        epoch_source=getattr(w, "epoch_source", "") if w else "", measurements=candidates, searches=[], rows=rows,
        checkpoint=ckpt, memory=est, notes=notes, modes=modes,
    )


def _default_batch(w, size: str) -> int | None:
    """The workload's batch for `size`; the full preset's for a preset without one (bert-base
    seq384): a batch our eager models fit, not the published implementation's."""
    if w is None:
        return None
    return w.default_batch_size(size if size in w.batch_size else "full")


def _published(workload: str, size: str, precision: str, gpu: str, count: int):
    return [r for r in published_for(workload, gpu, precision, count) if r.size == size]


def _published_any(workload: str):
    from ..catalog.published import published_rows

    return [r for r in published_rows() if r.workload == workload]


def _mode_estimates(w, size: str, precision: str) -> dict[str, MemoryEstimate]:
    """Issue 17: full / LoRA x activation checkpointing estimates; {} when a trace fails."""
    if w is None:
        return {}
    try:
        return mode_estimates(w, size, precision)
    except InputError:
        raise
    except Exception:  # noqa: BLE001  (the plain estimate's error is already in the notes)
        return {}


def _rank_key(row: CostRow, spot: bool):
    cost = row.rank_cost(spot)
    fits = row.fit.fits if row.fit else None
    return (fits is False, cost is None, cost if cost is not None else 0.0, row.epoch_hours or float("inf"))
