"""Throughput of a GPU nobody measured here: the analytic step cost on that GPU at a stated
efficiency (plugin/cost/projection.py), with the multi-GPU scaling that backs the instance.

Efficiency, in order: this project's own measured run of the same workload, size and precision
on a GPU with a catalog peak (fitted there, carried across families by the published ratio),
else the published fit for the target's family (efficiency.py). A CPU run never supplies one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.families import gpu_family
from ..catalog.gpus import GpuSpec, gpu_catalog
from ..cost.efficiency import efficiency_for, published_scaling
from ..cost.projection import Efficiency, Projection, device_precision, fit_efficiency, project
from ..cost.step import StepCost, cost_for

__all__ = ["Projected", "measured_efficiency", "project_instance"]

_HALF = ("fp16", "bf16")


@dataclass(frozen=True)
class Projected:
    per_gpu: float | None  # samples/s per GPU before scaling
    scale: float  # per-GPU scaling efficiency on the instance's GPU count (1.0: linear)
    basis: str  # short, for the table: "projected (published efficiency)"
    method: str  # the full statement
    efficiency_kind: str | None
    bound: str | None


def _same_class(a: str, b: str) -> bool:
    return a == b or (a in _HALF and b in _HALF)


def measured_efficiency(measurements, workload: str, size: str, precision: str,
                        target: GpuSpec) -> Efficiency | None:
    """Efficiency fitted to this project's GPU run of the same workload, size and precision class,
    preferring the target's family; carried to another family by the published family ratio."""
    catalog = gpu_catalog()
    target_family = gpu_family(target.name)
    fitted = []
    for m in measurements:
        spec = catalog.get(m.gpu)
        if spec is None or m.gpu == "cpu" or m.size != size or not _same_class(m.precision, precision):
            continue
        cost = cost_for(workload, size, m.precision, m.batch_size or 1)
        applied, _ = device_precision(spec, m.precision)
        e = None if cost is None else fit_efficiency(cost, spec, applied, m.samples_per_s_per_gpu)
        if e is not None:
            same = gpu_family(m.gpu) == target_family
            fitted.append((not same, -m.runs, m, spec, e))
    if not fitted:
        return None
    _, _, m, spec, e = min(fitted, key=lambda t: t[:2])
    label = f"fitted to this project's measured {m.gpu} run ({m.precision}, batch {m.batch_size}, {m.origin})"
    src_family, dst_family = gpu_family(m.gpu), target_family
    if src_family and dst_family and src_family.name != dst_family.name:
        theirs = efficiency_for(m.gpu, precision, workload)
        ours = efficiency_for(target.name, precision, workload)
        if theirs.kind != "assumed" and ours.kind != "assumed":
            ratio = ours.value / theirs.value
            e *= ratio
            label += f" x {ratio:.2f} ({dst_family.name}/{src_family.name} published ratio)"
    return Efficiency(min(1.0, e), "measured", label)


def project_instance(workload: str, size: str, precision: str, batch: int, spec: GpuSpec, count: int,
                     measurements, fallback_flops: float | None) -> Projected:
    cost = cost_for(workload, size, precision, batch)
    if cost is None and fallback_flops:
        cost = StepCost(workload, size, precision, batch, fallback_flops, None)  # unregistered: FLOPs only
    if cost is None:
        return Projected(None, 1.0, f"n/a: no FLOPs per sample for {workload}", "", None, None)
    eff = measured_efficiency(measurements, workload, size, precision, spec)
    if eff is None:
        eff = efficiency_for(spec.name, precision, workload)
    proj: Projection = project(cost, spec, precision, eff)
    if proj.samples_per_s is None:
        return Projected(None, 1.0, proj.method, proj.method, None, None)
    basis = f"projected ({eff.kind} efficiency)"
    method = proj.method
    scale = 1.0
    if count > 1:
        backed = published_scaling(workload, size, spec.name, count, precision)
        if backed:
            scale, label = backed
            basis += f"; {label}"
        else:
            basis += f"; x{count} assumes linear scaling"
    if spec.verified == "derived":
        basis += "; derived peak"
    return Projected(proj.samples_per_s, scale, basis, method, eff.kind, proj.bound)
