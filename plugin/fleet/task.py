"""One SkyPilot task YAML per candidate: install the pinned commit, preflight, run the suite.

Single node: `trainbench preflight` (its checklist saved beside the results) then `pytest bench/ --gpu=<profile>` writing
`<results dir>/<profile>.json`; a spot run restarted by SkyPilot's recovery continues that file
with `--trainbench-resume`. Several nodes: the distributed benchmarks under torchrun, with the
rendezvous from SkyPilot's environment (SKYPILOT_NODE_IPS' first line is the head,
SKYPILOT_NODE_RANK, SKYPILOT_NUM_NODES, SKYPILOT_NUM_GPUS_PER_NODE); rank 0, on the head
node, writes the results files. The results directory is a bucket mount when the plan has a
bucket (needed for managed jobs: their machines are gone when the job ends), otherwise
~/trainbench-results on the head node, fetched with rsync.
"""

from __future__ import annotations

import shlex
from typing import Any

from ..catalog.gpus import get_gpu
from ..distributed.topology import parse_topology
from ..errors import InputError
from .plan import Candidate, PlanConfig
from .source import Source

__all__ = ["MOUNT", "LOCAL_RESULTS", "RECOVERY", "results_dir", "task_dict", "task_yaml"]

MOUNT = "/trainbench-results"  # where the bucket is mounted on every node
LOCAL_RESULTS = "~/trainbench-results"  # results on the head node when there is no bucket
RECOVERY = {"strategy": "EAGER_NEXT_REGION", "max_restarts_on_errors": 0}  # preemptions only
MASTER_PORT = 29500


def results_dir(cfg: PlanConfig) -> str:
    return f"{MOUNT}/{cfg.name}" if cfg.bucket else LOCAL_RESULTS


def _bucket_mount(bucket: str) -> dict[str, Any]:
    store, _, name = bucket.partition("://")
    return {MOUNT: {"name": name, "store": store, "mode": "MOUNT", "persistent": True}}


def _setup(source: Source) -> str:
    return "\n".join([
        "set -euo pipefail",
        # the workdir is the pinned commit; say so in the log when it carries its .git
        "git rev-parse HEAD 2>/dev/null || true",
        "pip install -q torch==2.13.0",
        "pip install -q -e .",
        "",
    ])


def _suite_args(cfg: PlanConfig) -> list[str]:
    args = []
    if cfg.workloads:
        args.append(f"--workload={','.join(cfg.workloads)}")
    if cfg.precision:
        args.append(f"--precision={','.join(cfg.precision)}")
    if cfg.size:
        args.append(f"--size={cfg.size}")
    return args


def _single_node_run(c: Candidate, cfg: PlanConfig) -> list[str]:
    cap_s = int(cfg.max_hours * 3600)
    # --drills: the convergence drill gives select its dollars to a target loss, the preemption
    # drill the goodput a spot offer keeps; a candidate machine is rented to measure all of it
    pytest = ["python", "-m", "pytest", "bench/", f"--gpu={c.gpu}", "--drills", '--trainbench-results="$OUT"',
              *map(shlex.quote, _suite_args(cfg))]
    return [
        f'OUT="$RESULTS/{c.gpu}.json"',
        'RESUME=""',
        # a spot run restarted after a preemption continues the sweep it had written
        'if [ -f "$OUT" ]; then RESUME="--trainbench-resume=$OUT"; fi',
        # SIGINT at the cap: pytest stops like on Ctrl-C and still writes the results file
        f"timeout --signal=INT --kill-after=120 {cap_s} {' '.join(pytest)} $RESUME",
    ]


def _torchrun(module_args: list[str], env: dict[str, str]) -> str:
    prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
    launch = ("torchrun --nnodes=$SKYPILOT_NUM_NODES --node-rank=$SKYPILOT_NODE_RANK "
              "--nproc-per-node=$SKYPILOT_NUM_GPUS_PER_NODE --master-addr=$MASTER_ADDR "
              f"--master-port={MASTER_PORT} -m trainbench.cli.rank")
    return " ".join(p for p in (f"env {prefix}" if prefix else "", launch, *module_args) if p)


def _amp(gpu: str) -> str:
    """bf16 where the GPU has it, else fp16 (pre-Ampere: T4, V100)."""
    return "bf16" if get_gpu(gpu).peak_flops("bf16") is not None else "fp16"


def _multi_node_run(c: Candidate, cfg: PlanConfig) -> list[str]:
    lines = ['MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)', "STATUS=0"]
    for name in cfg.topologies:
        topo = parse_topology(name)
        tag = "".join(ch if ch.isalnum() else "-" for ch in name)
        out = f"$RESULTS/{c.gpu}-x{c.nodes}-collectives-{tag}.json"
        lines.append(_torchrun(["collectives", "--out", f"/tmp/tb-coll-{tag}", "--topology", shlex.quote(name),
                                "--results", f'"{out}"'], dict(topo.env)) + " || STATUS=$?")
        for workload in cfg.workloads or ("resnet50",):
            for precision in cfg.precision or (_amp(c.gpu),):
                out = f"$RESULTS/{c.gpu}-x{c.nodes}-ddp-{workload}-{precision}-{tag}.json"
                lines.append(_torchrun(
                    ["ddp", "--workload", workload, "--size", cfg.size or "full", "--precision", precision,
                     "--out", f"/tmp/tb-ddp-{workload}-{tag}", "--topology", shlex.quote(name),
                     "--results", f'"{out}"'], dict(topo.env)) + " || STATUS=$?")
    lines.append("exit $STATUS")
    return lines


def _run(c: Candidate, cfg: PlanConfig) -> str:
    where = f"{MOUNT}/{cfg.name}" if cfg.bucket else "$HOME/trainbench-results"  # = results_dir(cfg)
    # a machine that fails preflight would only produce numbers nobody should trust: stop there
    preflight = ["trainbench", "preflight", f"--gpu={c.gpu}", f'--results="$RESULTS/{c.gpu}-preflight.json"']
    if cfg.workloads:
        preflight.append(f"--workload={','.join(cfg.workloads)}")
    head = ["set -uo pipefail", f'RESULTS="{where}"', 'mkdir -p "$RESULTS"', " ".join(preflight) + " || exit $?"]
    body = _multi_node_run(c, cfg) if c.nodes > 1 else _single_node_run(c, cfg)
    return "\n".join([*head, *body, ""])


def task_dict(c: Candidate, cfg: PlanConfig, source: Source) -> dict[str, Any]:
    if c.spot and not cfg.bucket:
        raise InputError("--spot: managed jobs' machines are gone when the job ends, so results need a bucket; "
                         "pass --bucket s3://NAME or gs://NAME")
    resources: dict[str, Any] = {"infra": c.price.cloud, "accelerators": c.accelerator, "use_spot": c.spot}
    if c.spot:
        resources["job_recovery"] = dict(RECOVERY)
    task: dict[str, Any] = {
        "name": c.name,
        "workdir": source.workdir(),
        "num_nodes": c.nodes,
        "resources": resources,
        "envs": {"TRAINBENCH_COMMIT": source.commit, "TRAINBENCH_GPU": c.gpu},
    }
    if cfg.bucket:
        task["file_mounts"] = _bucket_mount(cfg.bucket)
    task["setup"] = _setup(source)
    task["run"] = _run(c, cfg)
    return task


def task_yaml(task: dict[str, Any]) -> str:
    try:
        import yaml
    except ImportError:
        raise InputError("writing SkyPilot task YAMLs needs PyYAML: pip install 'pytest-trainbench[fleet]'") from None

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value: str):
        style = "|" if "\n" in value else None  # scripts as literal blocks, readable as written
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(task, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
