"""`trainbench report` on three results files: md, csv, json and an HTML page whose charts are
real PNG images (decoded here); missing numbers are "n/a"; bad inputs change nothing."""

import base64
import csv
import io
import json
import os
import re

import pytest
from PIL import Image

from trainbench.cli import main
from trainbench.records.record import Record
from results_factory import CPU_ENV, GPU_ENV, training, write


def _three_runs(tmp_path):
    cpu = write(tmp_path / "cpu-run.json", CPU_ENV, [
        training(seed=1),
        training("bench/test_training.py::test_training[resnet50-bf16]", precision="bf16", step_s=0.02, seed=2),
        training("bench/test_training.py::test_training[gpt-small-fp32]", workload="gpt-small", storage="local",
                 step_s=0.05, seed=3, extra={"tokens_per_s": 5000.0, "stall_ratio": 0.30}),
    ])
    gpu_extra = {"mfu": 0.41, "cost_per_epoch_usd": 12.5, "energy_j_per_sample": 0.8}
    oom = Record(test="bench/test_training.py::test_training[gpt-small-fp32]", kind="training", workload="gpt-small",
                 size="tiny", precision="fp32", batch_size=16, storage="local", gpu="h100-80g", status="oom",
                 message="out of memory")
    h100 = write(tmp_path / "h100-run.json", GPU_ENV, [
        training(seed=4, gpu="h100-80g", step_s=0.001, mem_kind="cuda_allocated", extra=gpu_extra),
        training("bench/test_training.py::test_training[resnet50-bf16]", precision="bf16", step_s=0.0006, seed=5,
                 gpu="h100-80g", mem_kind="cuda_allocated", extra=dict(gpu_extra, cost_per_epoch_usd=7.0)),
        oom,
    ])
    dist = [training(seed=6, gpu="h100-80g", step_s=0.001, storage="s3", mem_kind="cuda_allocated",
                     extra={"stall_ratio": 0.2})]
    for n, eff in ((1, 1.0), (2, 0.95), (4, 0.9), (8, 0.8)):
        dist.append(Record(test=f"bench/test_ddp.py::test_ddp[resnet50-{n}]", kind="ddp", workload="resnet50",
                           size="tiny", precision="bf16", batch_size=16, topology="nvlink", world_size=n,
                           gpu="h100-80g", metrics={"samples_per_s": 1000.0 * n * eff, "scaling_efficiency": eff}))
    for size in (2**10, 2**16, 2**20, 2**26):
        bw = 300.0 * size / (size + 2**20)
        dist.append(Record(test=f"bench/test_collectives.py::test_all_reduce[{size}]", kind="collective",
                           topology="nvlink", world_size=8, gpu="h100-80g",
                           config={"op": "all_reduce", "size_bytes": size},
                           metrics={"algbw_gbps": bw / 1.75, "busbw_gbps": bw}))
    multi = write(tmp_path / "h100-dist.json", dict(GPU_ENV, driver="575.0", git_commit="bbbb"), dist)
    return [cpu, h100, multi]


def _pngs(html):
    blobs = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    return [base64.b64decode(b) for b in blobs]


def test_three_runs_give_md_csv_json_and_html_with_real_charts(tmp_path, capsys):
    files = _three_runs(tmp_path)
    out = tmp_path / "out"
    assert main(["report", *map(str, files), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [f"comparison.{e}" for e in ("csv", "html", "json", "md")]

    md = (out / "comparison.md").read_text()
    for title in ("## Runs", "## Environment differences", "## Benchmarks: training", "## Benchmarks: ddp",
                  "## Benchmarks: collective", "## Throughput (samples/s) by run", "## Stall ratio by storage backend",
                  "## DDP scaling", "## Collective bus bandwidth"):
        assert title in md, title
    env = md.split("## Environment differences")[1].split("##")[0]
    assert "driver" in env and "570.1" in env and "575.0" in env and "gpu_name" in env
    training_table = md.split("## Benchmarks: training")[1].split("\n## ")[0]
    assert "peak process RSS" in training_table and "peak device mem" in training_table
    cpu_row = next(l for l in training_table.splitlines() if l.startswith("| cpu@ci-a aaaa ") and "resnet50" in l and "fp32" in l)
    assert cpu_row.count("n/a") >= 2  # MFU and device memory of a CPU run: n/a, not 0
    oom_row = next(l for l in training_table.splitlines() if "| oom " in l)
    assert oom_row.count("n/a") >= 8 and "| 0 " in oom_row  # 0 measured steps; every metric n/a
    assert "0.00" not in training_table

    rows = list(csv.DictReader(io.StringIO((out / "comparison.csv").read_text())))
    assert len(rows) == 3 + 3 + 1 + 4 + 4
    cpu_rows = [r for r in rows if r["run"] == "cpu@ci-a aaaa"]
    assert {r["mfu"] for r in cpu_rows} == {"n/a"} and {r["peak_mem_kind"] for r in cpu_rows} == {"process RSS"}
    oom = next(r for r in rows if r["status"] == "oom")
    assert oom["samples_per_s"] == "n/a"
    assert float(next(r for r in rows if r["run"] == "h100-80g@gpu-b aaaa")["mfu"]) == pytest.approx(0.41)

    doc = json.loads((out / "comparison.json").read_text())
    assert [r["label"] for r in doc["runs"]] == ["cpu@ci-a aaaa", "h100-80g@gpu-b aaaa", "h100-80g@gpu-b bbbb"]
    assert len(doc["records"]) == len(rows)
    assert {d["key"] for d in doc["environment_differences"]} >= {"driver", "gpu_name", "cuda", "cpu_count"}

    html = (out / "comparison.html").read_text()
    assert "<script" not in html and "http" not in html.split("<body>")[1]  # self-contained
    pngs = _pngs(html)
    assert len(pngs) == 5  # throughput, cost, stall, DDP scaling, busbw
    for blob in pngs:
        img = Image.open(io.BytesIO(blob))
        img.load()
        assert img.format == "PNG" and img.width >= 400 and img.height >= 200
        colors = img.convert("RGB").getcolors(maxcolors=1 << 20)
        assert len(colors) > 50  # a drawn chart, not a blank canvas
    assert len(set(pngs)) == 5
    assert "Left out for lack of data" not in html
    printed = capsys.readouterr().out
    assert str(out / "comparison.html") in printed


def test_charts_are_of_the_data_and_absent_ones_are_named(tmp_path):
    one = write(tmp_path / "a.json", CPU_ENV, [training(seed=1)])
    faster = write(tmp_path / "b.json", CPU_ENV, [training(seed=1, step_s=0.005)])
    pages = []
    for f in (one, faster):
        out = tmp_path / f.stem
        assert main(["report", str(f), "--out", str(out), "--format", "html"]) == 0
        pages.append((out / "comparison.html").read_text())
        assert [p.name for p in out.iterdir()] == ["comparison.html"]
    charts = [_pngs(p) for p in pages]
    assert len(charts[0]) == 2  # throughput and stall; no cost, DDP or collectives
    assert charts[0][0] != charts[1][0]  # other throughput, other picture
    for reason in ("no records with cost_per_epoch_usd", "no records of kind ddp", "no records of kind collective"):
        assert reason in pages[0]


BAD = {
    "truncated": '{"schema": "trainbench-results/1", "environment": {}, "records": [{"test": "x", ',
    "corrupt": "\x89PNG not json",
    "schema": '{"schema": "trainbench-results/999", "environment": {}, "records": []}',
    "records": '{"schema": "trainbench-results/1", "environment": {}, "records": [{"kind": "training"}]}',
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_input_exit_2_names_the_file_and_overwrites_nothing(tmp_path, capsys, kind):
    files = _three_runs(tmp_path)
    bad = tmp_path / f"{kind}.json"
    bad.write_text(BAD[kind])
    out = tmp_path / "out"
    out.mkdir()
    old = out / "comparison.md"
    old.write_text("the previous report\n")
    stamp = os.stat(old).st_mtime_ns
    inputs = {p: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in files}
    assert main(["report", str(files[0]), str(bad), str(files[1]), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "Traceback" not in err
    assert sorted(p.name for p in out.iterdir()) == ["comparison.md"]
    assert old.read_text() == "the previous report\n" and os.stat(old).st_mtime_ns == stamp
    assert {p: (p.read_bytes(), os.stat(p).st_mtime_ns) for p in files} == inputs


def test_output_over_an_input_is_refused(tmp_path, capsys):
    src = write(tmp_path / "comparison.json", CPU_ENV, [training(seed=1)])
    before = src.read_bytes()
    assert main(["report", str(src), "--out", str(tmp_path)]) == 2
    assert "is one of the input files" in capsys.readouterr().err
    assert src.read_bytes() == before and not (tmp_path / "comparison.md").exists()


def test_no_records_and_bad_format(tmp_path, capsys):
    empty = write(tmp_path / "empty.json", CPU_ENV, [])
    assert main(["report", str(empty), "--out", str(tmp_path / "o")]) == 2
    assert "no benchmark records" in capsys.readouterr().err and not (tmp_path / "o").exists()
    assert main(["report", str(empty), "--format", "md,pdf"]) == 2
    assert "argument --format: unknown value(s) pdf; supported: md, csv, json, html" in capsys.readouterr().err
