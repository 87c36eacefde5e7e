"""`cost_per_epoch_usd` for one measured record (used by the pytest plugin at session end)."""

from __future__ import annotations

from typing import Iterable, Sequence

from ..catalog.mig import MIG_SUFFIX
from ..catalog.prices import PriceRow, cheapest_price, load_prices
from .epoch import cost_per_epoch
from ..records.record import Record

__all__ = ["cost_for_record", "fill_costs"]


def cost_for_record(
    record: Record, workload=None, prices: Sequence[PriceRow] | None = None, spot: bool = False
) -> tuple[float | None, str]:
    """(USD per epoch or None, what it is based on) for `record` measured on `record.gpu`.

    Uses the cheapest per-GPU price for that GPU profile (unflagged rows first) x the GPUs the
    record used (`world_size`). None, with the reason, for CPU runs, a GPU with no price,
    a missing throughput or a workload without an epoch size.
    """
    gpu = (record.gpu or "").lower()
    kind = "spot" if spot else "on-demand"
    if not gpu or gpu == "cpu":
        return None, "n/a: no price for a CPU run"
    if gpu.endswith(MIG_SUFFIX):
        return None, f"n/a: {gpu} is a MIG slice, and a price is for the whole GPU"
    sps = record.metrics.get("samples_per_s")
    if not sps or sps <= 0:
        return None, "n/a: no measured samples_per_s"
    epoch = getattr(workload, "epoch_samples", None)
    if not epoch:
        return None, f"n/a: workload {record.workload!r} has no epoch size"
    rows = load_prices() if prices is None else prices
    row = cheapest_price(rows, gpu, spot=spot)
    if row is None:
        return None, f"n/a: no {kind} price for {gpu} in the price catalog"
    per_gpu = row.price_per_gpu(spot)
    usd = cost_per_epoch(epoch, sps, per_gpu, max(1, record.world_size))
    return usd, (
        f"{epoch} samples at measured {sps:.4g} samples/s on {record.world_size}x {gpu}, "
        f"{per_gpu:.4g} USD/GPU-h ({row.describe(spot)})"
    )


def fill_costs(records: Iterable[Record], prices: Sequence[PriceRow] | None = None) -> None:
    """Set `metrics["cost_per_epoch_usd"]` (None when n/a) and `config["cost_basis"]` on every
    passed training/ddp record with a throughput (the pytest plugin calls this at session end)."""
    from ..errors import InputError
    from ..workloads import get_workload

    rows = load_prices() if prices is None else prices
    for rec in records:
        if rec.kind not in ("training", "ddp") or rec.status != "passed" or "samples_per_s" not in rec.metrics:
            continue
        try:
            workload = get_workload(rec.workload) if rec.workload else None
        except InputError:
            workload = None
        usd, basis = cost_for_record(rec, workload, rows)
        rec.metrics["cost_per_epoch_usd"] = usd
        rec.config["cost_basis"] = basis
