"""Per-kind HTML/markdown tables carry the columns that tell their rows apart, and run labels
are short (profile@host commit), not results-file timestamps."""

from results_factory import CPU_ENV, GPU_ENV, training, write

from trainbench.cli import main
from trainbench.records.record import Record
from trainbench.report.merge import load_runs, rows_of
from trainbench.report.tables import build_tables


def _records():
    recs = [training()]
    for op in ("all_reduce", "all_gather"):
        for size in (1024, 4 * 2**20):
            recs.append(Record(test="bench/test_collectives.py::test_collectives[default]", kind="collective",
                               world_size=2, topology="default", step_times_s=[1e-3] * 8,
                               metrics={"busbw_gbps": 1.5, "algbw_gbps": 1.0, "time_s": 1e-3},
                               config={"op": op, "size_bytes": size, "dtype": "float32"}))
    recs.append(Record(test="bench/test_preflight.py::test_preflight::shm", kind="preflight", status="passed",
                       message="/dev/shm is 64 MiB", config={"check": "shm", "result": "warn",
                                                              "fix": "docker run --shm-size=8g"}))
    recs.append(Record(test="bench/test_resume.py::test_resume[gpt-small-fp32]", kind="resume", workload="gpt-small",
                       metrics={"ckpt_save_s": 0.042, "ckpt_load_s": 0.0131, "ckpt_bytes": 3 * 2**20,
                                "resume_max_abs_diff": 0.0},
                       config={"bitwise_equal": True}))
    return recs


def _tables(tmp_path):
    a = write(tmp_path / "20261129T100000Z-ci-a.json", CPU_ENV, _records())
    b = write(tmp_path / "20261129T110000Z-gpu-b.json", GPU_ENV, [training(gpu="h100-80g")])
    runs = load_runs([a, b])
    return runs, {t.title: t for t in build_tables(runs, rows_of(runs))}


def test_collective_preflight_resume_tables_have_their_distinguishing_columns(tmp_path):
    runs, tables = _tables(tmp_path)
    coll = tables["Benchmarks: collective"]
    for header in ("op", "size", "dtype", "world", "steady"):
        assert header in coll.headers, coll.headers
    keys = {tuple(row[coll.headers.index(h)] for h in ("op", "size", "dtype", "world")) for row in coll.rows}
    assert len(keys) == len(coll.rows) == 4  # every row told apart
    assert ("all_gather", "4.0 MiB", "float32", "2") in keys
    pre = tables["Benchmarks: preflight"]
    row = dict(zip(pre.headers, pre.rows[0]))
    assert (row["item"], row["result"], row["message"], row["fix"]) == (
        "shm", "warn", "/dev/shm is 64 MiB", "docker run --shm-size=8g")
    res = dict(zip(tables["Benchmarks: resume"].headers, tables["Benchmarks: resume"].rows[0]))
    assert res["save"] == "42.0 ms" and res["load"] == "13.1 ms" and res["checkpoint size"] == "3.0 MiB"
    assert res["resume result"] == "bitwise equal"
    assert [r.label for r in runs] == ["cpu@ci-a aaaa", "h100-80g@gpu-b aaaa"]


def test_one_number_format_per_unit(tmp_path):
    _, tables = _tables(tmp_path)
    train = tables["Benchmarks: training"]
    p50 = [row[train.headers.index("step p50")] for row in train.rows]
    assert all(cell.endswith(" ms") and len(cell.split(".")[1]) == len("0 ms") for cell in p50), p50
    stall = [row[train.headers.index("stall ratio")] for row in train.rows]
    assert stall == ["5.0%", "5.0%"]


def test_html_report_has_the_columns(tmp_path):
    a = write(tmp_path / "r.json", CPU_ENV, _records())
    assert main(["report", str(a), "--out", str(tmp_path / "out"), "--format", "html"]) == 0
    html = next((tmp_path / "out").glob("*.html")).read_text()
    for header in ("<th>op</th>", "<th>dtype</th>", "<th>item</th>", "<th>fix</th>", "<th>resume result</th>"):
        assert header in html
