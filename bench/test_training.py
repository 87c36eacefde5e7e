"""Training throughput of every registered workload at each --precision.

    pytest bench/                       # tiny models on a CPU, full ones on a GPU
    pytest bench/ --gpu=a100-80g --precision=fp32,bf16 --steps=100
    pytest bench/ --workload=llama-1b --finetune=full,lora --compile=none,default
"""

import math


def test_training(trainbench, tb_workload, tb_precision, tb_finetune, tb_compile):
    rec = trainbench.train(tb_workload, precision=tb_precision, finetune=tb_finetune, compile=tb_compile)
    m = rec.metrics
    assert m["samples_per_s"] > 0
    assert 0.0 <= m["stall_ratio"] <= 1.0
    assert m["peak_mem_bytes"] > 0
    assert len(rec.step_times_s) == rec.config["measured_steps"] >= rec.config["steps"]  # + the time floor
    assert math.isfinite(m["loss_last"]), "training diverged (loss is inf/NaN)"
    if tb_compile != "none":
        assert rec.metrics["compile_s"] > 0 and rec.config["compile_graphs"] >= 1
