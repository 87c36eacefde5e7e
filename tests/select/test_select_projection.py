"""Projections checked against the shipped published table, and where their efficiency comes from.

Must-show 1: ratios among A10, A100-80G SXM and H100 SXM within 25% of the published ratios,
and the published order of every GPU pair. Must-show 2: L4 above T4 for bert-base.
Must-show 3: select from a CPU-only results file ranks A10G (labelled derived peak), every row
says measured or projected with its method, published figures shown beside. Must-show 4: a
measured GPU run's efficiency is what projections to other GPUs use, and they say so.
"""

from __future__ import annotations

import itertools
import json

import pytest

from trainbench.catalog.gpus import get_gpu
from trainbench.catalog.prices import packaged_prices
from trainbench.catalog.published import median_per_gpu, published_for, published_rows
from trainbench.cli import main
from trainbench.cost.efficiency import efficiency_for, published_batch
from trainbench.cost.projection import fit_efficiency, project
from trainbench.cost.step import cost_for
from trainbench.records.record import Record
from trainbench.records.results import load_results, write_results
from trainbench.select import SelectConfig, build_groups

CHECKED = [("resnet50", "full"), ("bert-base", "seq384")]  # published configurations we mirror
SOURCE = "lambda"  # ratios and order within one source: one software stack for every GPU
TRIO = ("a10", "a100-80g", "h100")


def _projected(workload, size, precision, gpu, held_out: bool) -> float:
    """Per-GPU projection at the published batch; `held_out`: the efficiency is fitted without
    this GPU's own published rows (its family's other GPUs only)."""
    row = next(r for r in published_for(workload, gpu, precision) if r.source == SOURCE)
    cost = cost_for(workload, size, precision, published_batch(row))
    eff = efficiency_for(gpu, precision, workload, exclude_gpu=gpu if held_out else None)
    return project(cost, get_gpu(gpu), precision, eff).samples_per_s


def _table_gpus(workload):
    return sorted({r.gpu for r in published_rows() if r.workload == workload and r.gpu_count == 1
                   and r.source == SOURCE and r.precision == "fp16"})


def _published(workload, gpu, precision):
    return median_per_gpu([r for r in published_for(workload, gpu, precision) if r.source == SOURCE])


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
@pytest.mark.parametrize("workload, size", CHECKED)
@pytest.mark.parametrize("held_out", [True, False], ids=["gpu-held-out", "as-select-runs"])
def test_projected_ratios_match_the_published_ratios_within_25_percent(workload, size, precision, held_out):
    proj = {g: _projected(workload, size, precision, g, held_out) for g in TRIO}
    pub = {g: _published(workload, g, precision) for g in TRIO}
    for a, b in itertools.combinations(TRIO, 2):
        ratio, published = proj[b] / proj[a], pub[b] / pub[a]
        assert abs(ratio / published - 1) <= 0.25, (a, b, ratio, published)


@pytest.mark.parametrize("workload, size", CHECKED)
def test_every_published_gpu_pair_keeps_its_order(workload, size):
    gpus = _table_gpus(workload)
    assert len(gpus) >= 6
    proj = {g: _projected(workload, size, "fp16", g, held_out=False) for g in gpus}
    pub = {g: _published(workload, g, "fp16") for g in gpus}
    for a, b in itertools.combinations(gpus, 2):
        assert (proj[a] < proj[b]) == (pub[a] < pub[b]), (a, b, proj[a], proj[b], pub[a], pub[b])


def _cpu_results(tmp_path, workload="bert-base"):
    rec = Record(test="t::cpu", kind="training", workload=workload, size="tiny", precision="fp32",
                 batch_size=16, gpu="cpu", metrics={"samples_per_s": 200.0})
    return write_results(tmp_path / "cpu.json", {"gpu_profile": "cpu", "gpu_name": None}, [rec])


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_l4_projects_faster_than_t4_for_bert(tmp_path, precision):
    (group,) = build_groups([load_results(_cpu_results(tmp_path))], packaged_prices(),
                            SelectConfig(size="full", precision=precision))
    rate = {r.gpu: r.samples_per_s for r in group.rows if r.gpu_count == 1}
    assert rate["l4"] > rate["t4"]
    assert rate["a10g"] > rate["t4"]


def test_select_from_a_cpu_run_ranks_a10g_and_labels_every_row(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["select", str(_cpu_results(tmp_path)), "--size", "seq384", "--precision", "fp16",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert max(len(line) for line in printed.splitlines()) <= 120
    rows = json.loads((out / "select.json").read_text())["rows"]
    assert len(rows) == len(packaged_prices())  # the CPU ran tiny: no measured row at seq384
    a10g = next(r for r in rows if r["gpu_profile"] == "a10g")
    assert a10g["samples_per_s"] and a10g["on_demand_usd_per_epoch"] and "derived peak" in a10g["basis_text"]
    costs = [r["on_demand_usd_per_epoch"] for r in rows]
    assert None not in costs and rows.index(a10g) < len(rows) - 1  # ranked among the others, not last
    for r in rows:
        assert r["basis"] == "projected" and r["method"].startswith(("analytic step", "fp16 on"))
        assert r["efficiency_kind"] in ("published", "borrowed")  # never the CPU's efficiency
        for key in ("cloud", "instance", "gpu_count", "spot_usd_per_epoch", "fits", "published"):
            assert key in r
    published = {r["gpu_profile"]: r["published"] for r in rows if r["gpu_count"] == 1}
    assert published["a10"].startswith("135 (lambda 2023, fp16, seq 384)")
    assert published["h100"].startswith("812-877")
    assert published["l4"] is None  # no published row: nothing shown, nothing invented
    eight = next(r for r in rows if r["instance"] == "p4de.24xlarge")
    assert "scaling (lambda 2023 8x a100-80g" in eight["basis_text"]
    p4d = next(r for r in rows if r["instance"] == "p4d.24xlarge")
    assert "assumes linear scaling" in p4d["basis_text"]  # no published 8x a100-40g row
    md = (out / "select.md").read_text()
    assert "published samples/s (not ours)" in md and "How the projected rows were made" in md


def test_a_measured_gpu_run_supplies_the_efficiency_and_says_so(tmp_path):
    sps = 300.0  # synthetic: bert-base full bf16 at batch 32 on one A100-80G SXM
    rec = Record(test="t::a100", kind="training", workload="bert-base", size="full", precision="bf16",
                 batch_size=32, gpu="a100-80g", metrics={"samples_per_s": sps})
    path = write_results(tmp_path / "a100.json", {"gpu_profile": "a100-80g"}, [rec])
    (group,) = build_groups([load_results(path)], packaged_prices(), SelectConfig())
    cost = cost_for("bert-base", "full", "bf16", 32)
    e = fit_efficiency(cost, get_gpu("a100-80g"), "bf16", sps)
    published = efficiency_for("a100-80g", "bf16", "bert-base")
    assert e is not None and abs(e - published.value) > 0.05  # the two differ: the test can tell
    by_gpu = {(r.gpu, r.gpu_count): r for r in group.rows}
    assert by_gpu[("a100-80g", 1)].measured and by_gpu[("a100-80g", 1)].samples_per_s == pytest.approx(sps)
    # same family: the measured efficiency as is
    pcie = by_gpu[("a100-80g-pcie", 1)]
    assert pcie.efficiency_kind == "measured" and "fitted to this project's measured a100-80g run" in pcie.method
    assert pcie.samples_per_s == pytest.approx(project(cost, get_gpu("a100-80g-pcie"), "bf16",
                                                       pcie_eff := type(published)(e, "measured", "x")).samples_per_s)
    assert pcie_eff.value == pytest.approx(e)
    # another family: carried over by the published hopper/ampere ratio, and the label says so
    h100 = by_gpu[("h100", 1)]
    ratio = efficiency_for("h100", "bf16", "bert-base").value / published.value
    assert h100.efficiency_kind == "measured" and "hopper/ampere published ratio" in h100.method
    expect = project(cost, get_gpu("h100"), "bf16", type(published)(e * ratio, "measured", "x")).samples_per_s
    assert h100.samples_per_s == pytest.approx(expect)
    assert "projected (measured efficiency)" in h100.basis


def test_a_row_that_cannot_be_projected_is_drawn_with_its_reason(tmp_path):
    import dataclasses

    from trainbench.select.charts import _per_gpu, group_chart_png

    (group,) = build_groups([load_results(_cpu_results(tmp_path))], packaged_prices(),
                            SelectConfig(size="full", precision="bf16", clouds=("aws",)))
    lost = dataclasses.replace(group.rows[0], samples_per_s=None, epoch_hours=None, on_demand_usd=None,
                               spot_usd=None, gpu="mystery", basis="n/a: no bf16 peak for mystery in the catalog")
    group.rows.append(lost)
    drawn = _per_gpu(group, spot=False)
    assert drawn[-1] is lost  # last, and present: not silently dropped
    assert group_chart_png(group)[:4] == b"\x89PNG"
