"""Distributed arithmetic and parsing without launching anything: busbw factors, efficiency,
topology presets and `env:` validation, torchrun failure summaries."""

import argparse
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trainbench.distributed.bandwidth import OPS, algbw_gbps, busbw_factor, busbw_gbps, element_count
from trainbench.distributed.collectives import size_sweep
from trainbench.distributed.ddp import default_world_sizes
from trainbench.distributed.failure import explain
from trainbench.distributed.topology import parse_topology_list as parse_topologies
from trainbench.distributed.scaling import comm_exposed_ratio, scaling_efficiency
from trainbench.distributed.topology import effective_nccl_env, parse_topology, split_topology_list, topology_names
from trainbench.errors import InputError

ranks = st.integers(min_value=1, max_value=4096)
sizes = st.integers(min_value=1, max_value=2**40)
times = st.floats(min_value=1e-7, max_value=1e3, allow_nan=False)


@given(ranks)
def test_busbw_factors_are_the_nccl_tests_ones(n):
    assert busbw_factor("all_reduce", n) == Fraction(2 * (n - 1), n)
    assert busbw_factor("all_gather", n) == busbw_factor("reduce_scatter", n) == Fraction(n - 1, n)
    assert busbw_factor("broadcast", n) == 1
    assert busbw_factor("all_reduce", n) == 2 * busbw_factor("all_gather", n)  # RS + AG phases


@given(st.sampled_from(OPS), ranks, sizes, times)
def test_busbw_is_algbw_times_factor(op, n, size, t):
    alg = algbw_gbps(size, t)
    assert alg == size / t / 1e9
    assert busbw_gbps(op, n, size, t) == pytest.approx(alg * float(busbw_factor(op, n)), rel=1e-12)


@given(st.sampled_from(("all_gather", "reduce_scatter")), ranks, sizes, st.sampled_from((1, 2, 4, 8)))
def test_sharded_ops_get_a_whole_share_per_rank(op, n, size, itemsize):
    count, used = element_count(op, size, n, itemsize)
    assert count % n == 0 and count >= n and used == count * itemsize
    assert used <= max(size, n * itemsize)


def test_unknown_op_and_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="known: all_reduce, all_gather, reduce_scatter, broadcast"):
        busbw_factor("all_to_all", 2)
    with pytest.raises(ValueError):
        algbw_gbps(1024, 0.0)


def test_size_sweep_and_default_world_sizes():
    assert size_sweep(1024, 4 * 2**20, 4) == [1024 * 4**i for i in range(7)]
    assert size_sweep(8, 8, 2) == [8]
    assert default_world_sizes(1) == [1]
    assert default_world_sizes(2) == [1, 2]
    assert default_world_sizes(8) == [1, 2, 4, 8]
    assert default_world_sizes(6) == [1, 2, 4, 6]


@given(st.floats(min_value=1e-3, max_value=1e6), st.integers(1, 1024), st.floats(min_value=1e-3, max_value=1e6))
def test_scaling_efficiency_definition(tput_n, n, tput_1):
    assert scaling_efficiency(tput_n, n, tput_1) == pytest.approx(tput_n / (n * tput_1))
    assert scaling_efficiency(n * tput_1, n, tput_1) == pytest.approx(1.0)
    assert scaling_efficiency(tput_n, n, None) is None  # unknown baseline: None, never a guess


@given(times, times)
def test_comm_exposed_ratio_is_a_clipped_share(t_sync, t_local):
    ratio, raw = comm_exposed_ratio(t_sync, t_local)
    assert raw == pytest.approx(1 - t_local / t_sync)
    assert 0.0 <= ratio <= 1.0
    if 0 <= raw <= 1:
        assert ratio == raw


def test_presets_and_their_nccl_settings():
    assert topology_names() == ["default", "no-p2p", "no-rdma", "ring", "socket", "tree"]
    assert dict(parse_topology("no-p2p").env) == {"NCCL_P2P_DISABLE": "1", "NCCL_NVLS_ENABLE": "0"}
    assert dict(parse_topology("no-rdma").env) == {"NCCL_IB_DISABLE": "1"}
    sock = dict(parse_topology("socket").env)
    assert sock["NCCL_NET"] == "Socket" and sock["NCCL_P2P_DISABLE"] == sock["NCCL_SHM_DISABLE"] == "1"
    assert dict(parse_topology("ring").env) == {"NCCL_ALGO": "Ring"}
    assert dict(parse_topology("tree").env) == {"NCCL_ALGO": "Tree"}
    assert parse_topology("default").env == {} and parse_topology("default").applies_to("gloo")
    assert not parse_topology("no-p2p").applies_to("gloo") and parse_topology("no-p2p").applies_to("nccl")


def test_custom_env_topology_is_parsed_and_canonical():
    topo = parse_topology("env:NCCL_ALGO=Ring, NCCL_SOCKET_IFNAME==eth0")
    assert topo.name == "env:NCCL_ALGO=Ring,NCCL_SOCKET_IFNAME==eth0"
    assert dict(topo.env) == {"NCCL_ALGO": "Ring", "NCCL_SOCKET_IFNAME": "=eth0"} and topo.nccl_only
    assert not parse_topology("env:GLOO_SOCKET_IFNAME=lo").nccl_only  # gloo reads it: runs on CPU


def test_topology_list_splits_env_items_after_env_prefix():
    assert split_topology_list("default,env:NCCL_ALGO=Ring,NCCL_PROTO=Simple,pcie") == [
        "default", "env:NCCL_ALGO=Ring,NCCL_PROTO=Simple", "pcie"]
    assert parse_topologies("no-p2p, default,no-p2p") == ["no-p2p", "default"]


@pytest.mark.parametrize("spec, message", [
    ("env:", "no settings after 'env:'"),
    ("env:NCCL_ALGO", "is not KEY=VALUE"),
    ("env:NCCL_ALGO=", "NCCL_ALGO has an empty value"),
    ("env:PATH=/tmp", "'PATH' is not a communication setting; allowed: NCCL_*"),
    ("env:LD_PRELOAD=x.so", "is not a communication setting"),
    ("env:NCCL_ALGO=Ring;rm", "no spaces, quotes or shell metacharacters"),
    ("env:NCCL_DEBUG=$(id)", "shell metacharacters"),
    ("env:NCCL_DEBUG=IN FO", "shell metacharacters"),
    ("env:NCCL_ALGO=Ring,NCCL_ALGO=Tree", "NCCL_ALGO is set twice"),
    ("nvlink", "unknown topology --topology=nvlink; known: default, no-p2p, no-rdma, ring, socket, tree"),
])
def test_bad_topologies_say_what_and_how(spec, message):
    with pytest.raises(InputError) as exc:
        parse_topology(spec)
    assert message in str(exc.value)
    with pytest.raises(InputError):
        parse_topologies(spec)


def test_effective_env_keeps_only_nccl_settings():
    env = {"NCCL_ALGO": "Ring", "PATH": "/bin", "TORCH_NCCL_BLOCKING_WAIT": "1", "HOME": "/root"}
    assert effective_nccl_env(env) == {"NCCL_ALGO": "Ring", "TORCH_NCCL_BLOCKING_WAIT": "1"}


SUMMARY = """
[rank0]: RuntimeError: Connection reset by peer
E1129 19:09:45.921000 12432 api.py:1002] failed (exitcode: -9) local_rank: 1 (pid: 12488) of binary: python3
=======================================================
plugin.distributed.collectives FAILED
-------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-29_19:09:45
  host      : node7
  rank      : 2 (local_rank: 0)
  exitcode  : -15 (pid: 12487)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 12487
-------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-29_19:09:45
  host      : node8
  rank      : 5 (local_rank: 1)
  exitcode  : 1 (pid: 12488)
  error_file: /tmp/x/error.json
  traceback : Traceback (most recent call last):
    File "x.py", line 1, in <module>
  RuntimeError: CUDA error: an illegal memory access was encountered
=======================================================
"""


def test_torchrun_summary_names_the_root_cause_rank_and_error():
    ranks, words = explain(SUMMARY)
    assert ranks == [5, 2]
    assert words.startswith("rank 5 (local rank 1 on host node8) exited with code 1: RuntimeError: CUDA error")
    assert words.endswith("(first failure); then rank 2 was stopped by torchrun (SIGTERM)")
    ranks, words = explain("failed (exitcode: -9) local_rank: 1 (pid: 1) of binary: python")
    assert ranks == [1] and words == "local rank 1 was killed by signal 9 (SIGKILL)"
    assert explain("nothing useful") == ([], "")


def test_a_killed_rank_beats_the_peer_torchrun_calls_root_cause():
    # torchrun ranks failures by error-file time: the SIGKILLed rank has none, so the peer that
    # raised "Connection closed by peer" is its "root cause"; the killed rank is the culprit
    log = SUMMARY.replace("exitcode  : -15 (pid: 12487)  (SIGTERM)", "exitcode  : -9 (pid: 12487)  (SIGKILL)")
    log = log.replace("Signal 15 (SIGTERM) received", "Signal 9 (SIGKILL) received")
    log = log.replace("CUDA error: an illegal memory access was encountered",
                      "[pair.cc:553] Connection closed by peer [127.0.0.1]:28544")
    ranks, words = explain(log)
    assert ranks == [2, 5]
    assert words.startswith("rank 2 (local rank 0 on host node7) was killed by signal 9 (SIGKILL) (first failure)")
    assert words.endswith("then rank 5 failed after losing a peer")


def test_fault_point_fires_on_its_rank_at_its_step_only():
    from trainbench.distributed.worker import FaultPoint

    batches = FaultPoint(1, "raise:1@2").wrap(iter(range(10)))  # DDP: one point per micro-batch fetch
    assert [next(batches), next(batches)] == [0, 1]
    with pytest.raises(RuntimeError, match="injected failure at fault point 2"):
        next(batches)
    other = FaultPoint(0, "raise:1@2")
    for _ in range(5):
        other()  # rank 0 never fails
    with pytest.raises(ValueError, match="MODE:RANK@STEP"):
        FaultPoint(0, "kill-rank-1")


@pytest.mark.parametrize("op", OPS)
def test_collective_checks_accept_the_right_values_and_catch_a_wrong_one(op):
    import types

    import torch

    from trainbench.distributed.collectives import _Case, _pattern

    ctx = types.SimpleNamespace(world_size=2, rank=1, device=torch.device("cpu"))
    case = _Case(op, 26, ctx, torch.float32)  # buffers as rank 1 holds them before the call
    share = 13
    right = {
        "all_reduce": _pattern(26, 0, torch.float32, ctx.device) + _pattern(26, 1, torch.float32, ctx.device),
        "all_gather": torch.cat([_pattern(share, 0, torch.float32, ctx.device), _pattern(share, 1, torch.float32, ctx.device)]),
        "reduce_scatter": (_pattern(26, 0, torch.float32, ctx.device) + _pattern(26, 1, torch.float32, ctx.device))[share:],
        "broadcast": _pattern(26, 0, torch.float32, ctx.device),
    }[op]
    assert not case.check()  # nothing was communicated yet
    case.buf.copy_(right)
    assert case.check()
    case.buf[-1] += 1
    assert not case.check()


def test_pcie_was_renamed_and_says_so():
    with pytest.raises(InputError, match="now called no-p2p"):
        parse_topology("pcie")


def test_tree_is_all_reduce_only_and_no_rdma_is_multi_node_only():
    assert parse_topology("tree").ops == ("all_reduce",) and parse_topology("default").ops is None
    assert parse_topology("no-rdma").multi_node_only and not parse_topology("socket").multi_node_only
