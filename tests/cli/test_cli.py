"""The `trainbench` command: exit codes and messages."""

import json

import pytest

from trainbench.cli import main


def test_bench_prints_measured_metrics_as_json(capsys):
    assert main(["bench", "--workload=resnet50", "--steps=2", "--warmup=1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["gpu"] == "cpu" and out["samples_per_s"] > 0 and out["mfu"] is None


@pytest.mark.parametrize("argv, message", [
    (["bench", "--workload=resnet51"], "unknown workload --workload=resnet51; known: bert-base, gpt-small, llama-1b, resnet50"),
    (["bench", "--workload=resnet50", "--gpu=h100"], "--gpu=h100 was requested but the detected device is no CUDA GPU"),
    (["bench", "--workload=resnet50", "--gpu=nonsense"], "argument --gpu: unknown GPU 'nonsense'; known: auto, cpu"),
])
def test_bad_input_exits_2_with_the_fix(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
