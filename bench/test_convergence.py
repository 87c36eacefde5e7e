"""Time, steps and dollars to a loss target on synthetic data whose optimum is known.

    pytest bench/ -k convergence                           # tiny models on a CPU, 5 seeds each
    pytest bench/test_convergence.py --gpu=a100-80g --precision=fp32,bf16,fp16

Each workload trains on its known-floor task (trainbench.convergence.tasks) until the held-out
loss is within --convergence-margin of the floor, --convergence-seeds times. One record
(kind "convergence") per configuration: olympic mean and CV of time/steps/samples to target,
dollars to target at the --gpu profile's price, and every seed's loss curve. A configuration
that does not reach the target is recorded as "not reached" -- a finding, not a failure; the
test fails only when the run is broken (a held-out loss clearly below the floor means the
floor or the held-out split is wrong).
"""

from dataclasses import asdict

import pytest

from trainbench.convergence.runner import ConvergenceConfig, train_to_target
from trainbench.convergence.summary import dollars_to_target, summarize
from trainbench.convergence.tasks import task_for
from trainbench.pytest_plugin.options import prices_for
from trainbench.workloads import get_workload

pytestmark = pytest.mark.drill  # left out of a plain `pytest bench/`: --drills runs it

BELOW_FLOOR_TOLERANCE = 0.03  # held-out estimate noise (~1-2% standard error) plus slack


def _converge(trainbench, pytestconfig, workload, precision, conv, seeds):
    s = trainbench.session
    task = task_for(get_workload(workload), s.size, conv.task_seed, conv.label_noise)
    runs = []
    for seed in range(s.seed, s.seed + seeds):
        cfg = trainbench.config(workload, precision=precision, seed=seed)
        runs.append(train_to_target(cfg, conv, task))
    target = task.floor * (1 + conv.margin)
    metrics, message = summarize(runs, task.floor, target)
    usd, basis = dollars_to_target(metrics["time_to_target_s"], s.profile, 1, prices_for(pytestconfig))
    metrics["dollars_to_target_usd"] = usd
    batch = cfg.batch_size or get_workload(workload).default_batch_size(cfg.size)
    rec = trainbench.record(
        kind="convergence", workload=workload, size=cfg.size, precision=precision, batch_size=batch,
        storage="synthetic", metrics=metrics, message=message,
        config={"task": task.name, "floor_derivation": task.derivation, "margin": conv.margin,
                "grad_accum": cfg.grad_accum, "convergence": asdict(conv), "dollars_basis": basis,
                "reached": message is None, "runs": [asdict(r) for r in runs]},
    )
    lowest = min(c["eval_loss"] for r in runs for c in r.curve)
    assert lowest >= task.floor * (1 - BELOW_FLOOR_TOLERANCE), (
        f"held-out loss {lowest:.4f} is below the floor {task.floor:.4f}: floor or held-out split is wrong")
    return rec


def _line(rec):
    m = rec.metrics
    if not rec.config["reached"]:
        return f"{rec.workload} {rec.precision}: {rec.message}"
    return (f"{rec.workload} {rec.precision}: {m['steps_to_target']:.0f} steps, {m['time_to_target_s']:.2f} s to "
            f"loss <= {m['loss_target']:.4f} (floor {m['loss_floor']:.4f}), CV of time {m['time_to_target_cv']:.1%} "
            f"over {m['runs']} seeds, $ {m['dollars_to_target_usd'] if m['dollars_to_target_usd'] is not None else 'n/a'}")


def test_convergence(trainbench, tb_workload, tb_precision, pytestconfig):
    opt = pytestconfig.getoption
    conv = ConvergenceConfig(margin=opt("--convergence-margin"), max_steps=opt("--convergence-max-steps"))
    rec = _converge(trainbench, pytestconfig, tb_workload, tb_precision, conv, opt("--convergence-seeds"))
    print(_line(rec))


def test_convergence_lr_100x(trainbench, tb_workload, pytestconfig):
    """The same recipe with a learning rate 100x the reference: expected "not reached", with its curve."""
    conv = ConvergenceConfig(margin=pytestconfig.getoption("--convergence-margin"), max_steps=200, lr_scale=100.0)
    rec = _converge(trainbench, pytestconfig, tb_workload, "fp32", conv, 1)
    rec.config["variant"] = "lr x100"
    print(_line(rec))
