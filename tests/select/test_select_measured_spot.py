"""`trainbench select --spot` uses the restart and checkpoint times that goodput records measured
(and says "measured on ..."), and its stated assumptions (saying "assumed") when there are none."""

from trainbench.cli import main
from trainbench.records.record import Record
from trainbench.records.results import write_results

W = "gpt-small"
TRAIN = Record(test="bench/test_training.py::test_training[gpt-small-fp32]", kind="training", workload=W,
               size="tiny", precision="fp32", batch_size=8, gpu="cpu", metrics={"samples_per_s": 40.0})
ENV = {"gpu_profile": "cpu", "gpu_name": None, "cpu_model": "Test CPU"}


def _goodput(store: str, restart: float, save: float) -> Record:
    return Record(test=f"bench/test_preemption.py::test_preemption[{store}]", kind="goodput", workload=W, size="tiny",
                  storage=store, gpu="cpu", metrics={"goodput": 0.5, "restart_to_first_step_s": restart,
                                                     "ckpt_save_s": save, "ckpt_load_s": save / 2})


def test_spot_uses_measured_goodput_inputs(tmp_path, capsys):
    path = write_results(tmp_path / "r.json", ENV, [TRAIN, _goodput("local", 4.0, 0.05), _goodput("s3", 7.5, 0.4)])
    assert main(["select", str(path), "--spot", "--out", str(tmp_path / "o")]) == 0
    spot = next(l for l in capsys.readouterr().out.splitlines() if "Spot model" in l)
    assert "restart 7.5 s and checkpoint save 0.4 s / load 0.2 s measured on CPU Test CPU, s3 checkpoint store" in spot
    assert "(assumed, --restart-min)" not in spot


def test_spot_without_goodput_records_says_assumed(tmp_path, capsys):
    path = write_results(tmp_path / "r.json", ENV, [TRAIN])
    assert main(["select", str(path), "--spot", "--out", str(tmp_path / "o")]) == 0
    spot = next(l for l in capsys.readouterr().out.splitlines() if "Spot model" in l)
    assert "restart 5 min (assumed, --restart-min)" in spot and "measured on" not in spot


def test_restart_min_given_wins_over_the_measurement(tmp_path, capsys):
    path = write_results(tmp_path / "r.json", ENV, [TRAIN, _goodput("s3", 7.5, 0.4)])
    assert main(["select", str(path), "--spot", "--restart-min", "3", "--out", str(tmp_path / "o")]) == 0
    spot = next(l for l in capsys.readouterr().out.splitlines() if "Spot model" in l)
    assert "restart 3 min (assumed, --restart-min)" in spot
