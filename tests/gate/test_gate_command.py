"""`trainbench compare` and `trainbench gate` on results files: verdicts, exit codes 0/1/2,
environment checks, the GitHub step summary, and clear errors naming the file."""

import json
import os

import pytest

from trainbench.cli import main
from results_factory import CPU_ENV, GPU_ENV, training, write


@pytest.fixture
def base(tmp_path):
    return write(tmp_path / "base.json", CPU_ENV, [
        training(seed=1),
        training("bench/test_training.py::test_training[gpt-small-fp32]", workload="gpt-small", seed=2),
    ])


@pytest.fixture
def window(tmp_path, base):
    """The baseline file and two reruns of it: a window whose run-to-run spread is measured."""
    more = [write(tmp_path / f"base{i}.json", CPU_ENV, [
        training(seed=10 * i + 1, step_s=0.01 * (1 + 0.002 * i)),
        training("bench/test_training.py::test_training[gpt-small-fp32]", workload="gpt-small", seed=10 * i + 2),
    ]) for i in (1, 2)]
    return [base, *more]


def _gate(capsys, *args):
    rc = main(["gate", *map(str, args)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_same_numbers_pass(tmp_path, base, window, capsys):
    cur = write(tmp_path / "cur.json", CPU_ENV, [training(seed=3), training(
        "bench/test_training.py::test_training[gpt-small-fp32]", workload="gpt-small", seed=4)])
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", cur)
    assert rc == 0, out
    assert "PASS" in out and "regression |" not in out


def test_slower_run_fails_with_the_regressed_metric(tmp_path, base, window, capsys):
    cur = write(tmp_path / "cur.json", CPU_ENV, [training(step_s=0.013, seed=3), training(
        "bench/test_training.py::test_training[gpt-small-fp32]", workload="gpt-small", seed=4)])
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", cur)
    assert rc == 1
    regressions = out.split("### Flagged")[1].split("###")[0]
    assert "test_training[resnet50-fp32]" in regressions and "samples/s" in regressions
    assert "gpt-small" not in regressions
    # the same files with a looser threshold pass; compare never fails
    assert _gate(capsys, "--baseline", *window, "--current", cur, "--max-regression", "throughput=40%,step_time=40%")[0] == 0
    assert main(["compare", str(base), str(cur)]) == 0


def test_memory_regression_and_kinds_never_mixed(tmp_path, base, window, capsys):
    more = training(seed=1, extra={"peak_mem_bytes": 400 * 2**20})
    cur = write(tmp_path / "cur.json", CPU_ENV, [more])
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", cur)
    assert rc == 1 and "peak memory" in out.split("### Flagged")[1].split("###")[0]
    assert _gate(capsys, "--baseline", *window, "--current", cur, "--max-regression", "peak_mem=50%")[0] == 0
    other_kind = write(tmp_path / "dev.json", CPU_ENV, [training(seed=1, mem_kind="cuda_allocated",
                                                                  extra={"peak_mem_bytes": 900 * 2**20})])
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", other_kind)
    assert rc == 0 and "not comparable" in out


def test_status_oom_is_a_regression(tmp_path, base, window, capsys):
    oom = training(seed=1, status="oom", message="out of memory")
    oom.metrics, oom.step_times_s = {}, []
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", write(tmp_path / "cur.json", CPU_ENV, [oom]))
    assert rc == 1
    assert "| status " in out.split("### Flagged")[1].split("###")[0] and "passed -> oom" in out


def test_env_mismatch_refused_unless_allowed(tmp_path, capsys):
    window = [write(tmp_path / f"base{i}.json", GPU_ENV, [training(seed=i, gpu="h100-80g")]) for i in range(3)]
    base = window[0]
    other = dict(GPU_ENV, torch="2.12.0")
    cur = write(tmp_path / "cur.json", other, [training(step_s=0.02, seed=5, gpu="h100-80g")])
    rc, out, err = _gate(capsys, "--baseline", *window, "--current", cur)
    assert rc == 2
    assert "torch" in out and "2.12.0" in out and "REFUSED" in out
    assert str(base) in err and "--allow-env-mismatch" in err
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", cur, "--allow-env-mismatch")
    assert rc == 1 and "allowed by --allow-env-mismatch" in out
    assert main(["compare", str(base), str(cur)]) == 0  # compare shows, never refuses
    out = capsys.readouterr().out
    assert "gate` refuses this baseline without --allow-env-mismatch" in out and "REFUSED" not in out


def test_cpu_core_count_is_shown_not_blocking(tmp_path, base, window, capsys):
    cur = write(tmp_path / "cur.json", dict(CPU_ENV, cpu_count=1), [training(seed=3)])
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", cur)
    assert rc == 0
    section = out.split("### Other environment differences")[1].split("###")[0]
    assert "| cpu_count     | 2          | 1         |" in section


def test_markdown_goes_to_github_step_summary(tmp_path, base, window, capsys, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    cur = write(tmp_path / "cur.json", CPU_ENV, [training(step_s=0.02, seed=3)])
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", cur)
    assert rc == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "## trainbench gate: FAIL" in text
    assert out.strip() in text


@pytest.mark.parametrize("content, expected", [
    ('{"schema": "trainbench-results/1", "environment": {}, "rec', "not valid JSON"),
    ("\x00\x01garbage", "not valid JSON"),
    ('{"schema": "trainbench-results/0", "environment": {}, "records": []}', "schema"),
    ("", "not valid JSON"),
])
def test_bad_files_exit_2_naming_the_file(tmp_path, base, capsys, content, expected):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    before = base.read_bytes(), os.stat(base).st_mtime_ns
    for args in (["gate", "--baseline", str(base), "--current", str(bad)],
                 ["gate", "--baseline", str(bad), "--current", str(base)],
                 ["compare", str(bad), str(base)]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert str(bad) in err and expected in err and "Traceback" not in err
    assert (base.read_bytes(), os.stat(base).st_mtime_ns) == before
    assert bad.read_text() == content


def test_no_matching_benchmarks_exit_2(tmp_path, base, window, capsys):
    cur = write(tmp_path / "cur.json", CPU_ENV, [training("bench/x.py::test_other", seed=3)])
    rc, _, err = _gate(capsys, "--baseline", *window, "--current", cur)
    assert rc == 2 and "no matching benchmarks" in err and str(base) in err and str(cur) in err


def test_missing_file_and_bad_threshold_exit_2(tmp_path, base, window, capsys):
    rc, _, err = _gate(capsys, "--baseline", *window, "--current", tmp_path / "nope.json")
    assert rc == 2 and "nope.json" in err and "not found" in err
    assert main(["gate", "--baseline", str(base), "--current", str(base), "--max-regression", "thruput=5%"]) == 2
    err = capsys.readouterr().err
    assert "unknown metric 'thruput'" in err and "throughput" in err
    assert main(["gate", "--baseline", str(base), "--current", str(base), "--max-regression", "throughput=fast"]) == 2
    assert "throughput='fast' is not a threshold" in capsys.readouterr().err


def test_output_is_json_free_markdown_with_all_compared_metrics(tmp_path, base, capsys):
    main(["compare", str(base), str(base)])
    out = capsys.readouterr().out
    assert "### All compared metrics" in out and "| verdict" in out
    assert "MFU" not in out  # None on both sides: nothing to compare, no fake 0 row
    json.dumps(out)  # printable


def _collectives(busbw_by_size, trial_s):
    from trainbench.records.record import Record

    return [Record(test="bench/test_collectives.py::test_collectives[default]", kind="collective",
                   topology="default", world_size=2, gpu="cpu",
                   metrics={"busbw_gbps": bw, "algbw_gbps": bw, "time_s": trial_s[size]},
                   step_times_s=[trial_s[size] * (1 + 0.01 * i) for i in range(5)],
                   config={"op": "all_reduce", "size_bytes": size, "dtype": "float32"})
            for size, bw in busbw_by_size.items()]


def test_collective_sweep_records_of_one_test_are_matched_by_op_and_size(tmp_path, capsys):
    # three baseline runs whose busbw moved 1-2% run to run
    window = [write(tmp_path / f"base{i}.json", CPU_ENV, _collectives({1024: 1.0 + 0.01 * i, 2**20: 10.0 - 0.2 * i},
                                                                     {1024: 1e-4, 2**20: 1e-3})) for i in range(3)]
    # the 1 MiB all_reduce got 2x slower; the 1 KiB one did not move
    cur = write(tmp_path / "cur.json", CPU_ENV, _collectives({1024: 1.0, 2**20: 5.0}, {1024: 1e-4, 2**20: 2e-3}))
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", cur)
    assert rc == 1 and "appears twice" not in out
    regressions = out.split("### Flagged")[1].split("###")[0]
    assert "all_reduce 1.0 MiB" in regressions and "busbw" in regressions
    assert "all_reduce 1 KiB" not in regressions
    assert "FAIL — 1 of 2 benchmarks regressed" in out


@pytest.mark.parametrize("command", ["gate", "compare", "report"])
def test_help_prints(command, capsys):
    assert main([command, "--help"]) == 0
    assert "usage: trainbench " + command in capsys.readouterr().out


def test_nothing_comparable_is_not_a_pass(tmp_path, capsys):
    skipped = training(seed=1, status="skipped", message="tf32 is a CUDA tensor-core mode")
    base = write(tmp_path / "base.json", CPU_ENV, [skipped])
    cur = write(tmp_path / "cur.json", CPU_ENV, [training(seed=2)])
    rc, _, err = _gate(capsys, "--baseline", base, "--current", cur)
    assert rc == 2 and "nothing to compare" in err and "no baseline run passed (skipped)" in err


def test_one_baseline_cannot_tell_noise_from_the_threshold(tmp_path, base, capsys):
    cur = write(tmp_path / "cur.json", CPU_ENV, [training(step_s=0.013, seed=3)])
    rc, out, _ = _gate(capsys, "--baseline", base, "--current", cur)
    assert rc == 0, out
    flagged = out.split("### Flagged")[1].split("###")[0]
    assert "insufficient data" in flagged and "not measured (1 run, needs 3)" in flagged


def test_baselines_from_a_directory_or_glob(tmp_path, window, capsys):
    cur = write(tmp_path / "cur.json", CPU_ENV, [training(step_s=0.013, seed=3)])
    folder = tmp_path / "main"
    folder.mkdir()
    for p in window:
        (folder / p.name).write_bytes(p.read_bytes())
    assert _gate(capsys, "--baseline", folder, "--current", cur)[0] == 1
    rc, out, _ = _gate(capsys, "--baseline", str(folder / "base*.json"), "--current", cur)
    assert rc == 1 and "3 run(s)" in out


def test_noise_inside_the_band_is_suspicious_and_fails_only_when_asked(tmp_path, capsys):
    # baseline runs 10 ms, 12 ms, 9 ms: a wide run-to-run spread; current 11.5 ms is 15% slower
    window = [write(tmp_path / f"b{i}.json", CPU_ENV, [training(step_s=s, seed=i)])
              for i, s in enumerate((0.010, 0.012, 0.009))]
    cur = write(tmp_path / "cur.json", CPU_ENV, [training(step_s=0.0115, seed=7)])
    rc, out, _ = _gate(capsys, "--baseline", *window, "--current", cur)
    assert rc == 0 and "suspicious" in out.split("### Flagged")[1]
    assert _gate(capsys, "--baseline", *window, "--current", cur, "--fail-on-suspicious")[0] == 1


@pytest.mark.parametrize("make, expected", [
    (lambda d: d.mkdir(), "directory holds no results files"),
    (lambda d: None, "pattern matches no file"),
])
def test_empty_directory_or_glob_is_one_line_exit_2(tmp_path, base, capsys, make, expected):
    target = tmp_path / "empty"
    make(target)
    spec = str(target) if target.exists() else str(tmp_path / "none-*.json")
    rc, _, err = _gate(capsys, "--baseline", spec, "--current", base)
    assert rc == 2 and expected in err and spec in err and len(err.strip().splitlines()) == 1


def test_window_mixing_gpu_profiles_is_refused_naming_the_file(tmp_path, base, capsys):
    gpu = write(tmp_path / "gpu.json", dict(GPU_ENV, start_time="2026-11-30T00:00:00+00:00"),
                [training(seed=1, gpu="h100-80g")])
    rc, _, err = _gate(capsys, "--baseline", base, gpu, "--current", base)
    assert rc == 2 and str(gpu) in err and "gpu_profile" in err and len(err.strip().splitlines()) == 1


def test_fleet_flags_a_slow_machine(tmp_path, base, capsys):
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    for i in range(6):
        write(fleet / f"m{i}.json", dict(CPU_ENV, host=f"m{i}"), [training(step_s=0.010 + 0.0002 * i, seed=i)])
    slow = write(tmp_path / "slow.json", CPU_ENV, [training(step_s=0.014, seed=9)])
    rc, out, _ = _gate(capsys, "--fleet", fleet, "--current", slow)
    assert rc == 1 and "below fleet" in out
    assert _gate(capsys, "--fleet", fleet, "--current", fleet / "m2.json")[0] == 0
