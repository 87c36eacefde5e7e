"""The candidates of a sweep and what they cost: one per GPU profile, on the cheapest offer of
the chosen clouds in the price catalog, priced at the catalog's instance rate.

Cost of one candidate = instance USD/hour (spot or on-demand, from prices.csv) x nodes x hours.
The hours are an assumption stated with the plan, never a measurement: provisioning and
install (`setup_hours`) plus the expected suite time (`expected_hours`); the time cap
(`max_hours`, enforced on the machine with `timeout`) bounds what a run can cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ..catalog.prices import PriceRow, cheapest_price
from ..errors import InputError
from .accelerators import sky_accelerator

__all__ = ["SKY_CLOUDS", "PlanConfig", "Candidate", "cheapest_gpus", "choose_candidates", "total_usd", "check_budget"]

SKY_CLOUDS = ("aws", "gcp", "azure")  # clouds of the price catalog that SkyPilot can launch on


@dataclass(frozen=True)
class PlanConfig:
    gpus: tuple[str, ...]  # catalog profiles, e.g. ("t4", "l4", "h100")
    clouds: tuple[str, ...] = SKY_CLOUDS  # offers considered (SkyPilot is pinned to the chosen one)
    spot: bool = False  # spot instances as managed jobs with a recovery strategy
    nodes: int = 1  # > 1: the distributed benchmarks across nodes with torchrun
    gpus_per_node: int = 1  # accelerators per node; the catalog row must have as many GPUs
    workloads: tuple[str, ...] | None = None  # None: every workload of the suite
    precision: tuple[str, ...] | None = None  # None: the suite's default
    size: str | None = None  # None: the suite's default for the device
    topologies: tuple[str, ...] = ("default",)  # NCCL presets for multi-node runs
    setup_hours: float = 0.25  # assumed: provisioning + installing torch and this project
    expected_hours: float = 1.0  # assumed: the suite's wall time on one candidate
    max_hours: float = 2.0  # time cap of the suite on one candidate (the run is stopped after)
    max_usd: float | None = None  # refuse a plan whose estimate is above this
    name: str = "tb"  # sweep name: prefix of cluster / job names and the results folder
    bucket: str | None = None  # "s3://NAME" or "gs://NAME": results go there (a storage mount)


@dataclass(frozen=True)
class Candidate:
    name: str  # cluster or managed-job name, e.g. "tb-t4"
    gpu: str  # catalog profile, the `--gpu` of the run
    accelerator: str  # SkyPilot name with count, e.g. "T4:1"
    price: PriceRow  # the catalog offer the estimate uses
    nodes: int
    spot: bool
    hours: float  # expected: setup + suite
    cap_hours: float  # setup + time cap

    @property
    def usd_per_hour(self) -> float:
        """Whole sweep member: instance price x nodes (USD/hour)."""
        p = self.price.spot_usd_per_hour if self.spot else self.price.on_demand_usd_per_hour
        return p * self.nodes

    @property
    def expected_usd(self) -> float:
        return self.usd_per_hour * self.hours

    @property
    def cap_usd(self) -> float:
        return self.usd_per_hour * self.cap_hours


def _offer(gpu: str, rows: Sequence[PriceRow], cfg: PlanConfig) -> PriceRow:
    mine = [r for r in rows if r.gpu == gpu]
    chosen = [r for r in mine if r.cloud in cfg.clouds]
    clouds = ",".join(cfg.clouds)
    if not chosen:
        where = sorted({r.cloud for r in mine if r.cloud in SKY_CLOUDS})
        fix = f"add {' or '.join(where)} to --clouds" if where else "no SkyPilot cloud offers it"
        raise InputError(f"--gpus={gpu}: not offered by --clouds={clouds} in the price catalog; {fix} or drop {gpu}")
    sized = [r for r in chosen if r.gpu_count == cfg.gpus_per_node]
    if not sized:
        counts = sorted({r.gpu_count for r in chosen})
        raise InputError(f"--gpus={gpu}: --clouds={clouds} offer it only as {'/'.join(map(str, counts))}-GPU "
                         f"instances in the price catalog; pass --gpus-per-node {counts[0]} or other --clouds")
    best = cheapest_price(sized, gpu, spot=cfg.spot)
    if best is None:
        raise InputError(f"--spot: no spot price for {gpu} on --clouds={clouds} in the price catalog; "
                         f"drop --spot or {gpu}")
    return best


def choose_candidates(cfg: PlanConfig, prices: Iterable[PriceRow]) -> list[Candidate]:
    rows = list(prices)
    out = []
    for gpu in cfg.gpus:
        offer = _offer(gpu, rows, cfg)
        out.append(Candidate(
            name=f"{cfg.name}-{gpu}", gpu=gpu, accelerator=f"{sky_accelerator(gpu)}:{cfg.gpus_per_node}",
            price=offer, nodes=cfg.nodes, spot=cfg.spot,
            hours=cfg.setup_hours + cfg.expected_hours, cap_hours=cfg.setup_hours + cfg.max_hours,
        ))
    return out


def total_usd(candidates: Sequence[Candidate]) -> tuple[float, float]:
    """(estimated USD at the expected durations, USD if every candidate runs to its cap)."""
    return sum(c.expected_usd for c in candidates), sum(c.cap_usd for c in candidates)


def check_budget(candidates: Sequence[Candidate], max_usd: float | None) -> None:
    estimate, _ = total_usd(candidates)
    if max_usd is None or estimate <= max_usd:
        return
    top = max(candidates, key=lambda c: c.expected_usd)
    raise InputError(
        f"--max-usd={max_usd:g}: the plan's estimate is ${estimate:.2f}; raise --max-usd to at least "
        f"{estimate:.2f} or drop GPUs from --gpus (the dearest is {top.gpu}, ${top.expected_usd:.2f})"
    )


def cheapest_gpus(groups, n: int, cfg: PlanConfig, spot: bool = False) -> tuple[str, ...]:
    """The `n` GPU profiles whose instances rank cheapest per epoch in select's report (its own
    estimate: measured where results exist, projected elsewhere), among offers the plan can
    launch: a SkyPilot cloud of --clouds, --gpus-per-node GPUs, and a model that fits."""
    from .accelerators import SKY_ACCELERATORS

    picked: list[str] = []
    for group in groups:
        for row in group.rows:  # already ranked by select: fitting, priced, cheapest first
            cost = row.rank_cost(spot)
            fits = row.fit is None or row.fit.fits is not False
            if (cost is None or not fits or row.cloud not in cfg.clouds or row.gpu_count != cfg.gpus_per_node
                    or row.gpu not in SKY_ACCELERATORS or row.gpu in picked):
                continue
            picked.append(row.gpu)
            if len(picked) == n:
                return tuple(picked)
    if not picked:
        raise InputError(f"--cheapest={n}: no priced instance that fits with {cfg.gpus_per_node} GPU(s) on "
                         f"--clouds={','.join(cfg.clouds)}; pass --gpus instead")
    return tuple(picked)
