"""DDP training scaling: every workload at 1, 2, 4, ... --nproc ranks in one torchrun launch,
per --topology: throughput, scaling efficiency, exposed communication; --ddp-bucket-mb.

    pytest bench/ -k ddp --workload=gpt-small                      # CPU: gloo, 1 and 2 ranks
    pytest bench/ -k ddp --size=full --topology=default,socket     # 8 GPUs
"""

import math


def test_ddp(trainbench_dist, tb_workload, tb_precision, tb_topology):
    records = trainbench_dist.ddp(tb_workload, tb_topology, precision=tb_precision)
    assert [r.world_size for r in records][0] == 1 and records[0].metrics["scaling_efficiency"] == 1.0
    for r in records:
        assert r.metrics["samples_per_s"] > 0
        assert math.isfinite(r.metrics["loss_last"]), "training diverged (loss is inf/NaN)"
