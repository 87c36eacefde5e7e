"""`trainbench select --workload gpt-small`: a "$ to target" column from convergence records,
labelled measured/projected per row; without them the column says why it is empty."""

import results_factory as rf
from trainbench.cli import main
from trainbench.records.record import Record


def _convergence(batch=8, samples=1920.0):
    return Record(test="bench/test_convergence.py::test_convergence[gpt-small-fp32]", kind="convergence",
                  workload="gpt-small", size="tiny", precision="fp32", batch_size=batch, gpu="cpu",
                  metrics={"samples_to_target": samples, "steps_to_target": samples / batch, "time_to_target_s": 9.0},
                  config={"margin": 0.1, "reached": True})


def _select(tmp_path, records, capsys):
    path = rf.write(tmp_path / "r.json", rf.CPU_ENV, records)
    assert main(["select", str(path), "--workload", "gpt-small", "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()  # the terminal shows the compact ranking; the columns are in select.md
    return (tmp_path / "out" / "select.md").read_text()


def test_column_from_convergence_records(tmp_path, capsys):
    train = rf.training(workload="gpt-small", batch=8, test="bench/test_training.py::test_training[gpt-small-fp32]")
    out = _select(tmp_path, [train, _convergence()], capsys)
    assert "$ to target" in out
    assert "(projected)" in out  # every priced GPU row is projected from the CPU measurement
    assert "240 steps = 1920 samples" in out


def test_column_says_why_it_is_empty(tmp_path, capsys):
    train = rf.training(workload="gpt-small", batch=8, test="bench/test_training.py::test_training[gpt-small-fp32]")
    out = _select(tmp_path, [train], capsys)
    assert "$ to target: no convergence record for gpt-small (tiny, fp32)" in out and "n/a (see notes)" in out
    out = _select(tmp_path, [train, _convergence(batch=16)], capsys)
    assert "not 8" in out
