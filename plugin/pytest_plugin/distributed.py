"""The `trainbench_dist` fixture: launches the distributed workers with torchrun for the current
test and folds rank 0's result into the session's records (results file at session end)."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
import torch

from ..distributed.bandwidth import OPS
from ..distributed.ddp import default_world_sizes
from ..harness.oom import oom_text, release_device_memory
from ..distributed.fold import collective_records, ddp_records, fsdp_records
from ..distributed.launch import Launch, LaunchResult, RankFailure, launch
from ..distributed.topology import Topology, parse_topology
from .fixture import Bench
from ..records.record import Record

__all__ = ["DistBench", "trainbench_dist"]


class DistBench:
    def __init__(self, bench: Bench, config: pytest.Config, tmp: pytest.TempPathFactory):
        self.bench = bench
        self.tmp = tmp  # launch directories: pytest keeps the last few sessions' (logs of failures)
        s = bench.session
        self.backend = "nccl" if s.on_gpu else "gloo"
        gpus = torch.cuda.device_count() if s.on_gpu else 0
        nproc = config.getoption("--nproc")
        if s.on_gpu and nproc is not None and nproc > gpus:
            raise pytest.UsageError(f"--nproc={nproc} but this node has {gpus} GPUs: NCCL needs one GPU per rank")
        self.nproc = nproc or (gpus if s.on_gpu else 2)
        self.timeout_s = config.getoption("--dist-timeout")
        self.bucket_mb = config.getoption("--ddp-bucket-mb")

    def _skip(self, msg: str, topology: str, **fields: Any) -> None:
        self.bench.record(status="skipped", message=msg, topology=topology, world_size=self.nproc, **fields)
        pytest.skip(msg)

    def _topology(self, name: str, **fields: Any) -> Topology:
        topo = parse_topology(name)
        if self.nproc < 2:
            what = "collectives" if fields.get("kind") == "collective" else "DDP scaling"
            self._skip(f"{what} need at least 2 ranks; this node has {self.nproc} "
                       f"({'GPU' if self.backend == 'nccl' else 'rank'}): run on a multi-GPU machine, or across "
                       f"nodes with torchrun", topo.name, **fields)
        if not topo.applies_to(self.backend):
            self._skip(f"topology {topo.name!r} sets {', '.join(f'{k}={v}' for k, v in topo.env.items())}, which "
                       f"only NCCL reads; this run uses {self.backend} (a CPU run), where it would equal 'default'",
                       topo.name, **fields)
        if topo.multi_node_only:  # pytest launches one node (torchrun --standalone)
            self._skip(f"topology {topo.name!r} changes only traffic between nodes and this launch is one node; "
                       f"run it with torchrun across nodes (see README, Distributed runs)", topo.name, **fields)
        return topo

    def _launch(self, module: str, args: list[str], topo: Topology, **fields: Any) -> LaunchResult:
        out = self.tmp.mktemp(module.rsplit(".", 1)[-1])
        args = [*args, "--backend", self.backend, "--timeout", f"{self.timeout_s:g}"]
        release_device_memory()  # this process's cached blocks would crowd the ranks on the same GPU
        try:
            result = launch(Launch(module, args, self.nproc, out, self.timeout_s, dict(topo.env)))
        except RankFailure as exc:
            failure = exc  # the directory stays: the message points at its log
        else:
            shutil.rmtree(out, ignore_errors=True)  # everything needed is in `result` now
            return result
        message = str(failure).split("\n--- last lines")[0]
        # a rank out of device memory is a result about the configuration (as in Bench.train)
        oom = oom_text(message)
        self.bench.record(status="oom" if oom else "failed", message=message, topology=topo.name,
                          world_size=self.nproc, config={"failed_ranks": failure.ranks, "timed_out": failure.timed_out,
                                                         "log": str(failure.log_path)}, **fields)
        if oom:
            pytest.xfail(f"{message}; try a smaller --batch-size or --precision=bf16")
        pytest.fail(str(failure), pytrace=False)

    def collectives(self, topology: str = "default", **worker_args: Any) -> list[Record]:
        """Collective sweep on --nproc ranks: one record per op and size (kind "collective").

        `worker_args` go to `trainbench.cli.rank collectives` as flags: ops="all_reduce",
        max_bytes=2**20, trials=5 -> --ops all_reduce --max-bytes 1048576 --trials 5.
        """
        topo = self._topology(topology, kind="collective")
        if topo.ops is not None:  # e.g. tree: NCCL has no tree for the other collectives
            asked = worker_args.get("ops", ",".join(OPS)).split(",")
            skipped = [op for op in asked if op not in topo.ops]
            for op in skipped:
                self.bench.record(status="skipped", kind="collective", topology=topo.name, world_size=self.nproc,
                                  message=f"{topo.name}: NCCL applies it to {', '.join(topo.ops)} only; {op} "
                                          f"would run its default algorithm", config={"op": op})
            worker_args = {**worker_args, "ops": ",".join(op for op in asked if op in topo.ops)}
        res = self._launch("trainbench.cli.rank", ["collectives", *_flags(worker_args)], topo, kind="collective")
        return [self.bench.record(**fields) for fields in collective_records(res.result, topo.name)]

    def ddp(self, workload: str, topology: str = "default", precision: str = "fp32",
            world_sizes: list[int] | None = None, **worker_args: Any) -> list[Record]:
        """DDP training at 1, 2, 4, ... --nproc ranks (one launch): one record per world size
        (kind "ddp"), per-rank batch fixed unless batch_mode="global" is passed."""
        s = self.bench.session
        fields = dict(kind="ddp", workload=workload, size=s.size, precision=precision)
        topo = self._topology(topology, **fields)
        args = dict(workload=workload, size=s.size, precision=precision, steps=s.steps, warmup=s.warmup,
                    grad_accum=s.grad_accum, seed=s.seed, batch_size=s.batch_size, bucket_mb=self.bucket_mb,
                    world_sizes=",".join(map(str, world_sizes or default_world_sizes(self.nproc))))
        args.update(worker_args)
        res = self._launch("trainbench.cli.rank", ["ddp", *_flags(args)], topo, **fields)
        return [self.bench.record(**fields) for fields in ddp_records(res.result, topo.name)]


    def fsdp(self, workload: str, topology: str = "default", precision: str = "fp32",
             world_sizes: list[int] | None = None, **worker_args: Any) -> list[Record]:
        """FSDP2 (fully_shard) training at 1, 2, 4, ... --nproc ranks in one launch: one record per
        world size (kind "fsdp"); worker_args as for `ddp` plus finetune="lora"."""
        s = self.bench.session
        fields = dict(kind="fsdp", workload=workload, size=s.size, precision=precision)
        topo = self._topology(topology, **fields)
        args = dict(workload=workload, size=s.size, precision=precision, steps=s.steps, warmup=s.warmup,
                    grad_accum=s.grad_accum, seed=s.seed, batch_size=s.batch_size,
                    activation_checkpointing=s.activation_checkpointing,
                    world_sizes=",".join(map(str, world_sizes or default_world_sizes(self.nproc))))
        args.update(worker_args)
        res = self._launch("trainbench.cli.rank", ["fsdp", *_flags(args)], topo, **fields)
        return [self.bench.record(**fields) for fields in fsdp_records(res.result, topo.name)]


def _flags(args: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in args.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        out += [flag] if value is True else [flag, str(value)]
    return out


@pytest.fixture
def trainbench_dist(request: pytest.FixtureRequest, trainbench_session: Any,
                    tmp_path_factory: pytest.TempPathFactory) -> DistBench:
    """Distributed benchmarks (torchrun subprocesses) recorded for this test."""
    return DistBench(Bench(trainbench_session, request.node.nodeid), request.config, tmp_path_factory)
