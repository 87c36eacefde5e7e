"""`trainbench bench --progress`: a bar on stderr with step k/N and s/step; stdout stays JSON."""

import json

from trainbench.cli import main


def test_bench_progress_on_goes_to_stderr_and_off_is_silent(capsys):
    args = ["bench", "--workload=bert-base", "--steps=3", "--warmup=1"]
    assert main([*args, "--progress=on"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["steps_measured"] == 3
    assert "bert-base fp32 measure" in err and "step 3/3" in err and "s/step" in err
    assert main([*args, "--progress=off"]) == 0
    assert "s/step" not in capsys.readouterr().err
