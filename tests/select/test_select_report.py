"""`trainbench select` on a CPU run's results marks every GPU row projected and the CPU row
measured; on several machines' results it ranks them."""

from __future__ import annotations

import base64
import re

import pytest

from trainbench.catalog.prices import packaged_prices
from trainbench.cli import main
from trainbench.records.record import Record
from trainbench.records.results import load_results, write_results
from trainbench.select import SelectConfig, build_groups

W = "gpt-small"


def _rec(gpu, sps, size="tiny", precision="fp32", batch=8, kind="training", **metrics):
    return Record(test=f"bench/test_training.py::test_train[{W}-{gpu}]", kind=kind, workload=W, size=size,
                  precision=precision, batch_size=batch, gpu=gpu, metrics={"samples_per_s": sps, **metrics})


@pytest.fixture
def cpu_results(tmp_path):
    recs = [_rec("cpu", 40.0), Record(test="t::resume", kind="resume", workload=W, size="tiny",
                                      metrics={"ckpt_save_s": 0.05, "ckpt_load_s": 0.02, "ckpt_bytes": 2e6})]
    return write_results(tmp_path / "cpu.json", {"gpu_profile": "cpu", "gpu_name": None}, recs)


def _machines(tmp_path, t4_sps, a100_sps):
    a = write_results(tmp_path / f"t4-{t4_sps}.json", {"gpu_profile": "t4"}, [_rec("t4", t4_sps)])
    b = write_results(tmp_path / f"a100-{a100_sps}.json", {"gpu_profile": "a100-80g"}, [_rec("a100-80g", a100_sps)])
    return [a, b]


def test_select_on_a_cpu_run_marks_gpu_rows_projected_and_cpu_measured(cpu_results, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["select", str(cpu_results), "--out", str(out)]) == 0
    (group,) = build_groups([load_results(cpu_results)], packaged_prices(), SelectConfig())
    cpu_rows = [r for r in group.rows if r.gpu == "cpu"]
    assert len(cpu_rows) == 1 and cpu_rows[0].measured and cpu_rows[0].basis == "measured on cpu"
    assert cpu_rows[0].on_demand_usd is None and cpu_rows[0].samples_per_s == 40.0
    gpu_rows = [r for r in group.rows if r.gpu != "cpu"]
    assert len(gpu_rows) == len(packaged_prices())
    for r in gpu_rows:
        # every GPU row projected from the analytic step, never from the CPU's own efficiency
        assert not r.measured and r.basis.startswith("projected (") and r.samples_per_s
        assert r.efficiency_kind != "measured" and "analytic step" in r.method
    # the checkpoint time comes from the resume record
    assert group.checkpoint.label.startswith("measured")
    md = (out / "select.md").read_text()
    printed = capsys.readouterr().out
    assert "measured" in printed and str(out / "select.json") in printed
    assert re.search(r"\| measured on cpu +\| 40 +\| - +\| [\d.]+ h ", md)
    assert md.count("projected (") >= len(gpu_rows)
    html = (out / "select.html").read_text()
    # self-contained: charts embedded as PNG data, nothing fetched from elsewhere
    images = re.findall(r"src='data:image/png;base64,([^']+)'", html)
    assert images and base64.b64decode(images[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http://" not in html and "https://" not in html
    assert "projected (" in html and "measured on cpu" in html


def _measured_order(paths, **cfg):
    (group,) = build_groups([load_results(p) for p in paths], packaged_prices(), SelectConfig(**cfg))
    return group, [r.gpu for r in group.rows if r.measured and r.on_demand_usd is not None]


def test_select_ranks_several_machines_by_measured_cost(tmp_path):
    # a100 10x faster than t4: a100 per-GPU price (p4de 3.43/h) beats t4 (0.526/h) per epoch
    group, order = _measured_order(_machines(tmp_path, 100.0, 1000.0))
    assert order[0] == "a100-80g" and "t4" in order
    costs = [r.on_demand_usd for r in group.rows if r.on_demand_usd is not None and (r.fit is None or r.fit.fits)]
    assert costs == sorted(costs)
    # the same a100 against a t4 that is only 2x slower: now the t4 ranks first
    _, order = _measured_order(_machines(tmp_path, 500.0, 1000.0))
    assert order[0] == "t4"
    # GPUs not measured take their efficiency from the measured GPU runs, and say so
    for r in group.rows:
        if not r.measured and r.samples_per_s is not None:
            assert r.efficiency_kind == "measured" and "fitted to this project's measured" in r.method


def test_select_spot_and_cloud_filters(tmp_path, capsys):
    paths = _machines(tmp_path, 100.0, 1000.0)
    group, _ = _measured_order(paths, spot=True, clouds=("aws",))
    assert {r.cloud for r in group.rows} == {"aws"}
    spot = [r.spot_usd for r in group.rows if r.spot_usd is not None and (r.fit is None or r.fit.fits)]
    assert spot == sorted(spot)
    for r in group.rows:
        if r.spot_usd is not None:
            # expected spot time = work + checkpoints + rework + restarts
            assert r.spot_overhead > 0 and r.ckpt_interval_s > 0
    assert main(["select", *map(str, paths), "--spot", "--clouds", "aws", "--out", str(tmp_path / "o")]) == 0
    assert "ranked by expected spot $/epoch" in capsys.readouterr().out
    assert "Ranked by expected spot cost" in (tmp_path / "o" / "select.md").read_text()


def test_flagged_price_rows_are_shown_not_silently_used(cpu_results, tmp_path, capsys):
    assert main(["select", str(cpu_results), "--out", str(tmp_path / "o")]) == 0
    md = (tmp_path / "o" / "select.md").read_text()
    assert "## Flagged price rows" in md
    for row in packaged_prices():
        if row.flag:
            assert row.flag.split(":")[0] in md and row.instance_type in md.split("## Flagged price rows")[1]


def test_projection_to_the_full_preset_is_labelled(cpu_results, tmp_path):
    (group,) = build_groups([load_results(cpu_results)], packaged_prices(), SelectConfig(size="full", precision="bf16"))
    assert group.size == "full"
    assert not any(r.measured for r in group.rows)  # the CPU ran tiny fp32: nothing measured here
    rows = [r for r in group.rows if r.samples_per_s is not None]
    # gpt-small has no published rows of its own: its GPU family's fit over the published workloads
    # is used and named as such, never the CPU's fraction of its own peak
    assert rows and all(r.efficiency_kind in ("published", "borrowed") and "analytic step" in r.method
                        and "all workloads" in r.method for r in rows)
    t4 = next(r for r in group.rows if r.gpu == "t4")
    assert "fp16 on t4" in t4.method  # no bf16 on a T4: AMP in fp16


@pytest.mark.parametrize(
    "argv, expect",
    [
        (["select", "missing.json"], "missing.json: not found"),
        (["select", "{cpu}", "--workload", "resnet50"], "--workload=resnet50"),
        (["select", "{cpu}", "--clouds", "tencent"], "--clouds=tencent"),
        (["select", "{cpu}", "--price-file", "nope.csv"], "nope.csv: not found"),
    ],
)
def test_select_input_errors_exit_2_with_a_message(cpu_results, tmp_path, capsys, argv, expect):
    argv = [a.replace("{cpu}", str(cpu_results)) for a in argv] + ["--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert expect in capsys.readouterr().err


def test_report_compares_the_estimate_with_measured_peaks_and_oom_searches(tmp_path, capsys):
    rec = _rec("a100-80g", 1000.0, peak_mem_bytes=30e6)
    rec.config["peak_mem_kind"] = "cuda_allocated"
    cpu = _rec("cpu", 40.0, peak_mem_bytes=900e6)
    cpu.config["peak_mem_kind"] = "process_rss"
    search = Record(test="search", kind="memory", workload=W, size="tiny", precision="fp32", batch_size=4096,
                    gpu="a100-80g", status="oom", config={"largest_batch": 3000})
    a = write_results(tmp_path / "a.json", {"gpu_profile": "a100-80g"}, [rec, search])
    b = write_results(tmp_path / "b.json", {"gpu_profile": "cpu"}, [cpu])
    assert main(["select", str(a), str(b), "--out", str(tmp_path / "o")]) == 0
    out = (tmp_path / "o" / "select.md").read_text()
    assert re.search(r"Check on a100-80g: estimate [\d.]+ GB vs measured max_memory_allocated 0\.03 GB at batch 8", out)
    assert "Check on cpu" not in out  # process RSS is never compared with device memory
    assert "Largest batch found by trying on a100-80g: 3000 (OOM search)" in out


def test_a_measured_multi_gpu_run_is_used_for_the_instance_with_that_many_gpus(tmp_path):
    one = _rec("h100", 100.0)
    eight = _rec("h100", 700.0, kind="ddp")  # 8 ranks together: 87.5 per GPU
    eight.world_size = 8
    path = write_results(tmp_path / "h.json", {"gpu_profile": "h100"}, [one, eight])
    (group,) = build_groups([load_results(path)], packaged_prices(), SelectConfig(clouds=("aws",)))
    p5 = next(r for r in group.rows if r.instance_type == "p5.48xlarge")
    p5_1 = next(r for r in group.rows if r.instance_type == "p5.4xlarge")
    assert p5.measured and p5.samples_per_s == pytest.approx(700.0) and p5.basis == "measured on h100"
    assert p5_1.measured and p5_1.samples_per_s == pytest.approx(100.0)


def test_summary_prefers_unflagged_rows_and_names_cheaper_flagged_ones(tmp_path, capsys):
    # fast on an a100-80g, slow on the other GCP GPUs: the flagged GCP rows (a2-ultragpu on the
    # a100-80g, a3-highgpu) are the cheapest
    recs = [_rec("a100-80g", 1000.0)] + [_rec(g, 10.0) for g in ("t4", "l4", "v100", "a100-40g")]
    path = write_results(tmp_path / "a.json", {"gpu_profile": "a100-80g"}, recs)
    assert main(["select", str(path), "--clouds", "gcp", "--out", str(tmp_path / "o")]) == 0
    md = (tmp_path / "o" / "select.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("- Cheapest on-demand:"))
    chosen, _, flagged = line.partition("; better but flagged (SUSPECT): ")
    flags = {r.instance_type: r.flag for r in packaged_prices()}
    picked = re.match(r"- Cheapest on-demand: \S+ (\S+) \(", chosen).group(1)
    named = re.match(r"\S+ (\S+),", flagged).group(1)
    assert flags[picked] == "" and flags[named].startswith("SUSPECT")


def test_a_model_the_memory_trace_cannot_run_gets_fit_na_not_a_crash(tmp_path):
    import dataclasses

    from cost_toy_workloads import TOY_GPT, gpt_loss
    from trainbench.workloads import register_workload, workloads

    def data_dependent_loss(model, batch):
        loss = gpt_loss(model, batch)
        return loss * (1.0 if loss.item() > 0 else 2.0)  # .item(): no value under fake tensors

    w = dataclasses.replace(TOY_GPT, name="toy-untraceable", loss=data_dependent_loss)
    register_workload(w)
    try:
        rec = _rec("cpu", 40.0)
        rec.workload = "toy-untraceable"
        path = write_results(tmp_path / "u.json", {"gpu_profile": "cpu"}, [rec])
        (group,) = build_groups([load_results(path)], packaged_prices(), SelectConfig(size="tiny"))
        assert group.memory is None and any("memory estimate unavailable" in n for n in group.notes)
        assert all(r.fit is None for r in group.rows)
        assert any(r.on_demand_usd is not None for r in group.rows)  # costs still computed
    finally:
        workloads().unregister("toy-untraceable")
