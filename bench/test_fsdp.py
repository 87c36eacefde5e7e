"""FSDP2 (fully_shard) training scaling: each workload at 1, 2, 4, ... --nproc ranks in one
torchrun launch: throughput, scaling efficiency, exposed reduce-scatter, per-rank memory and
the per-rank bytes of the sharded state (DDP holds the 1-rank figure on every rank).

    pytest bench/ -k fsdp                                      # CPU: llama-1b, gloo, 1 and 2 ranks
    pytest bench/ -k fsdp --workload=llama-1b --size=full      # N GPUs

On CPU the ranks split one global batch (--batch-mode global), so the 2-rank run must reach
the 1-rank parameters; on GPUs the per-rank batch is fixed (weak scaling), as FSDP is run.
"""

import math

import pytest
from torch import nn

from trainbench.workloads import get_workload


def _batch_independent(workload: str, size: str) -> bool:
    """No BatchNorm (per-rank batch statistics) and no active dropout (per-rank random masks):
    only then must a split batch give exactly the one-rank gradients."""
    model = get_workload(workload).model(size)
    return not any(isinstance(m, nn.modules.batchnorm._BatchNorm) or (isinstance(m, nn.Dropout) and m.p > 0)
                   for m in model.modules())


def test_fsdp(trainbench_dist, trainbench_session, tb_workload, tb_precision, tb_finetune, pytestconfig):
    if not pytestconfig.getoption("--workload") and tb_workload != "llama-1b":
        pytest.skip("FSDP runs llama-1b, the model it is for, unless --workload names others")
    on_cpu = not trainbench_session.on_gpu
    records = trainbench_dist.fsdp(tb_workload, precision=tb_precision, finetune=tb_finetune,
                                   batch_mode="global" if on_cpu else "per-rank", save_params=on_cpu,
                                   **({"batch_size": 8} if on_cpu else {}))
    one = records[0]
    assert one.world_size == 1 and one.metrics["scaling_efficiency"] == 1.0
    for r in records:
        assert r.metrics["samples_per_s"] > 0
        assert math.isfinite(r.metrics["loss_last"]), "training diverged (loss is inf/NaN)"
    for r in records[1:]:
        # sharding: each rank holds about 1/k of the weights, grads and optimizer state
        assert r.metrics["state_bytes_per_rank"] < one.metrics["state_bytes_per_rank"]
        if on_cpu and _batch_independent(tb_workload, one.size):
            assert r.metrics["params_rel_l2_vs_1rank"] < 1e-5, "k ranks did not reach the 1-rank parameters"
            assert r.config["params_within_1e-5_vs_1rank"] > 0.9999
