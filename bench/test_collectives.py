"""Collective bandwidth (all_reduce, all_gather, reduce_scatter, broadcast) on --nproc ranks
under torchrun, per --topology; algbw/busbw with the nccl-tests definitions.

    pytest bench/ -k collectives                                   # CPU: 2 gloo ranks
    pytest bench/ -k collectives --topology=default,no-p2p,socket    # 8 GPUs: NCCL transports
"""


def test_collectives(trainbench_dist, tb_topology):
    records = trainbench_dist.collectives(tb_topology)  # skips below 2 ranks, saying why
    assert records, "no collective was measured"
    wrong = [r.message for r in records if not r.config["correct"]]
    assert not wrong, f"collectives returned wrong values: {wrong}"
    for r in records:
        assert r.metrics["time_s"] > 0 and r.metrics["busbw_gbps"] > 0, r
