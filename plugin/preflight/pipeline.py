"""Pipeline items of the checklist: the whole training pipeline on one device with small data.

    loader -> forward -> backward -> optimizer step -> gradient accumulation
    -> checkpoint save -> resume in a fresh process -> identical next losses
    -> the loss falls when overfitting one batch -> fp16 + GradScaler stays finite

Everything runs through the project's harness (`build_trainer`, `Trainer.step`, the
workload's own dataset/loss/optimizer), so a user workload registered from a conftest is checked
exactly as it will be benchmarked. An item that raises becomes a failed item naming the
exception and where it came from; the items that depend on it become n/a.
"""

from __future__ import annotations

import contextlib
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import torch
from torch import nn

from ..data import LoaderConfig, make_loader
from ..errors import InputError
from ..harness.precision import UnsupportedPrecision, get_precision
from ..harness.oom import is_oom, release_device_memory
from ..harness.run import RunConfig, auto_workers, build_trainer, resolve_device
from ..harness.trainer import to_device
from .check import FAIL, NA, PASS, WARN, Check
from .plugins import workload_sources
from .resume import ResumeSpec, build, save_checkpoint, unsaved_buffers
from ..workloads import Workload, get_workload

__all__ = ["PipelineConfig", "PIPELINE_ITEMS", "pipeline_checks", "GRAD_RTOL", "resume_rtol"]

G = "pipeline"
PIPELINE_ITEMS = ("loader", "forward", "backward", "optimizer_step", "grad_accum", "checkpoint_save",
                  "resume", "next_loss", "overfit", "fp16")
# Accumulated vs large-batch gradients, ||g_k - g_1|| / ||g_1|| in fp32: summation order alone
# gives ~1e-7 on a CPU; GPU kernels may pick other algorithms for another batch size.
GRAD_RTOL = {"cpu": 1e-4, "cuda": 1e-3}
# Next losses after a resume: bitwise on a CPU (deterministic kernels, same thread count);
# relative on a GPU, where reductions may run in another order -- by precision, since a loss
# computed under autocast carries the rounding of its low-precision activations (a few units of
# bf16's 2^-8 / fp16's 2^-11 relative step), which a fresh process may pick kernels to round apart.
RESUME_RTOL = {"cpu": 0.0, "cuda": 1e-5}
RESUME_RTOL_CUDA = {"fp32": 1e-5, "tf32": 1e-3, "bf16": 2e-2, "fp16": 4e-3}


def resume_rtol(device_type: str, precision: str) -> float:
    """Relative tolerance on the next losses after a resume, for this device and precision."""
    if device_type == "cpu":
        return RESUME_RTOL["cpu"]
    return RESUME_RTOL_CUDA.get(precision, RESUME_RTOL["cuda"])


@dataclass(frozen=True)
class PipelineConfig:
    workload: str
    size: str = "tiny"  # model preset; preflight on a GPU uses "full": the real memory footprint
    precision: str = "fp32"  # of every item except grad_accum (fp32) and fp16 (fp16)
    batch_size: int | None = None  # micro-batch; None = the workload's default for the size
    device: str = "auto"
    seed: int = 0
    num_workers: int | None = None  # loader workers; None = the harness's choice for the device
    grad_accum: int = 2  # k: k micro-batches of batch/k vs one batch
    overfit_steps: int = 25  # optimizer steps on one repeated batch
    # the mean of the last 3 losses must be this fraction below the first: calibrating the output
    # alone (no memorization, e.g. labels redrawn on every access) gains under 10 % in tests
    overfit_drop: float = 0.20
    fp16_steps: int = 3
    resume_after: int = 2  # steps before the checkpoint
    resume_steps: int = 2  # steps compared after it: the 1st tests weights/buffers/data, the 2nd optimizer state
    workdir: str | None = None  # checkpoint directory; None = a temporary one
    plugins: tuple[str, ...] = ()  # modules / .py files a fresh process imports to find the workload
    child_timeout_s: float = 600.0
    items: tuple[str, ...] | None = None  # run only these items (None = all); the others are left out


class _Skip(Exception):
    """A prerequisite failed: the item is n/a."""


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f" (at {Path(f.filename).name}:{f.lineno})"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}{_where(exc)}"


def _finite(t: torch.Tensor) -> bool:
    return bool(torch.isfinite(t).all())


@contextlib.contextmanager
def _eval_mode(model: nn.Module) -> Iterator[None]:
    """Keep `model` in eval mode even though Trainer.step() calls model.train()."""
    model.train = lambda mode=True: nn.Module.train(model, False)  # instance attribute shadows the method
    model.eval()
    try:
        yield
    finally:
        del model.train
        model.train()


def _global_norm(tensors) -> float:
    return math.sqrt(sum(float(t.double().pow(2).sum()) for t in tensors))


class _Run:
    """Runs the items in order, with the state they share."""

    def __init__(self, cfg: PipelineConfig):
        self.cfg = cfg
        self.wl: Workload = get_workload(cfg.workload)
        self.device = resolve_device(cfg.device)
        self.precision = get_precision(cfg.precision)
        self.batch = cfg.batch_size or self.wl.default_batch_size(cfg.size)
        self.workers = auto_workers(self.device) if cfg.num_workers is None else cfg.num_workers
        self.checks: dict[str, Check] = {}
        self.trainer = None
        self.first_batch: Mapping[str, Any] | None = None
        self.checkpoint: Path | None = None
        self.spec: ResumeSpec | None = None
        self.expected: list[float] | None = None
        self.child_losses: list[float] | None = None
        self.unsaved_changed: list[str] = []
        self.unsaved: list[str] = []
        self.module_kinds: set[str] = set()
        self.tmpdir = "."

    # -- helpers -----------------------------------------------------------------------
    def check(self, name: str, status: str, reason: str, fix: str = "", **metrics: Any) -> None:
        self.checks[name] = Check(name, G, status, reason, fix, workload=self.wl.name, metrics=metrics)

    def item(self, name: str, fn: Callable[[], None], needs: tuple[str, ...] = ()) -> None:
        if self.cfg.items is not None and name not in self.cfg.items:
            return
        for dep in needs:
            dep_check = self.checks.get(dep)
            if dep_check is None or dep_check.status in (FAIL, NA):
                self.check(name, NA, f"not run: the {dep} item did not pass")
                return
        t0 = time.perf_counter()
        oom = None
        try:
            fn()
        except _Skip as exc:
            self.check(name, NA, str(exc))
        except Exception as exc:
            if not is_oom(exc):
                self._raised(name, exc)
            else:
                oom = str(exc).splitlines()[0] if str(exc) else "out of memory"
        if oom is not None:  # outside the except block, whose traceback holds the model
            release_device_memory()
            self.check(name, FAIL, f"out of memory at batch {self.batch}: {oom}",
                       "lower --batch-size and use --grad-accum for the same effective batch, use bf16/fp16, "
                       "or activation checkpointing (see the memory item)")
        done = self.checks[name]
        self.checks[name] = replace(done, metrics={**done.metrics, "item_s": time.perf_counter() - t0})

    def _raised(self, name: str, exc: Exception) -> None:
        # a user's workload may raise anything: report it as the item's failure
        self.check(name, FAIL, f"raised {_describe(exc)}",
                   "fix the workload function named in the traceback; reproduce with "
                   "`trainbench preflight --workload ... --traceback`")
        if os.environ.get("TRAINBENCH_TRACEBACK"):
            traceback.print_exception(exc)

    def run_config(self, **overrides: Any) -> RunConfig:
        base = dict(workload=self.wl.name, size=self.cfg.size, precision=self.cfg.precision, batch_size=self.batch,
                    device=str(self.device), seed=self.cfg.seed, num_workers=self.workers)
        base.update(overrides)
        return RunConfig(**base)

    # -- items ---------------------------------------------------------------------------
    def loader(self) -> None:
        ds = self.wl.dataset(self.cfg.size, 2 * self.batch, self.cfg.seed)
        loader = make_loader(ds, LoaderConfig(batch_size=self.batch, num_workers=self.workers,
                                              pin_memory=self.device.type == "cuda", seed=self.cfg.seed))
        t0 = time.perf_counter()
        it = iter(loader)
        batch = next(it)
        dt = time.perf_counter() - t0
        del it
        if not isinstance(batch, Mapping):
            self.check("loader", FAIL, f"a batch is a {type(batch).__name__}, not a dict of tensors",
                       "make the dataset return dict samples (the loss receives batch['name'])")
            return
        shapes, wrong = [], []
        for k, v in batch.items():
            if torch.is_tensor(v):
                shapes.append(f"{k} {str(v.dtype).removeprefix('torch.')} {tuple(v.shape)}")
                if v.dim() == 0 or v.shape[0] != self.batch:
                    wrong.append(k)
        if wrong:
            self.check("loader", FAIL, f"batch of {self.batch} requested, but {', '.join(wrong)} do not have it "
                       f"as the first dimension: {'; '.join(shapes)}",
                       "samples must be single examples that the DataLoader stacks (no batch dimension inside)")
            return
        self.first_batch = batch
        self.check("loader", PASS, f"first batch in {dt:.2f} s with {self.workers} worker(s): {'; '.join(shapes)}",
                   first_batch_s=dt, batch_bytes=sum(v.numel() * v.element_size() for v in batch.values() if torch.is_tensor(v)))

    def forward(self) -> None:
        self.trainer = build_trainer(self.run_config(dataset_samples=self.batch), loader=[self.first_batch])
        model = self.trainer.model
        self.module_kinds = {type(m).__name__ for m in model.modules()}
        model.train()
        self.batch_on_device = to_device(self.first_batch, self.device)
        with self.precision.context(self.device), self.precision.autocast(self.device):
            loss = self.wl.loss(model, self.batch_on_device)
        if not torch.is_tensor(loss) or loss.dim() != 0:
            shape = tuple(loss.shape) if torch.is_tensor(loss) else type(loss).__name__
            self.check("forward", FAIL, f"the loss is {shape}, not a scalar tensor",
                       "reduce the loss over the batch (mean) inside the workload's loss()")
            return
        if not _finite(loss.detach()):
            self.check("forward", FAIL, f"the first loss is {loss.detach().item():.4g}",
                       "check the input normalization and the model's initialization (no NaN weights)")
            return
        if not loss.requires_grad:
            self.check("forward", FAIL, "the loss does not require grad: nothing can be trained",
                       "remove torch.no_grad()/detach() between the parameters and the loss")
            return
        self.loss = loss
        value = loss.detach().item()
        self.check("forward", PASS, f"scalar loss {value:.4f} on {self.device}", loss=value)

    def backward(self) -> None:
        scaler = self.trainer.scaler
        (scaler.scale(self.loss) if scaler is not None else self.loss).backward()
        if scaler is not None:
            scaler.unscale_(self.trainer.optimizer)
        named = [(n, p) for n, p in self.trainer.model.named_parameters() if p.requires_grad]
        missing = [n for n, p in named if p.grad is None]
        bad = [n for n, p in named if p.grad is not None and not _finite(p.grad)]
        norm = _global_norm(p.grad for _, p in named if p.grad is not None and _finite(p.grad))
        if bad:
            status = WARN if scaler is not None else FAIL
            self.check("backward", status, f"non-finite gradients in {len(bad)} tensor(s), e.g. {', '.join(bad[:3])}"
                       + (" (GradScaler will skip this step and lower its scale)" if scaler else ""),
                       "look for log(0), division by zero or overflow in the loss; keep the loss in fp32",
                       grad_norm=norm)
            return
        if norm == 0.0:
            self.check("backward", FAIL, "every gradient is zero: the loss does not depend on the trainable parameters",
                       "check that the loss uses the model's output and no layer is frozen by mistake")
            return
        if missing:
            self.check("backward", WARN, f"{len(missing)} of {len(named)} trainable tensors get no gradient "
                       f"(e.g. {', '.join(missing[:3])}); grad norm {norm:.3g}",
                       "remove unused parameters or set requires_grad=False: DDP fails on them unless "
                       "find_unused_parameters=True (slower)", grad_norm=norm, unused=len(missing))
            return
        self.check("backward", PASS, f"finite gradients for all {len(named)} trainable tensors, norm {norm:.3g}",
                   grad_norm=norm)

    def optimizer_step(self) -> None:
        t, scaler = self.trainer, self.trainer.scaler
        params = [p for g in t.optimizer.param_groups for p in g["params"]]
        model_params = {id(p) for p in t.model.parameters()}
        before = [p.detach().clone() for p in t.model.parameters()]
        if scaler is not None:
            scaler.step(t.optimizer)
            scaler.update()
        else:
            t.optimizer.step()
        after = list(t.model.parameters())
        changed = sum(not torch.equal(a, b.detach()) for a, b in zip(before, after))
        if not any(id(p) in model_params for p in params):
            self.check("optimizer_step", FAIL, "the optimizer holds none of the model's parameters",
                       "build the optimizer from the parameters it is given: optimizer(params, size)")
            return
        if not all(_finite(p.detach()) for p in after):
            self.check("optimizer_step", FAIL, "parameters are inf/NaN after one step",
                       "lower the learning rate; check the gradients (backward item)")
            return
        if changed == 0:
            self.check("optimizer_step", FAIL, "one optimizer step changed no parameter",
                       "learning rate 0, every parameter frozen, or the GradScaler skipped the step")
            return
        self.check("optimizer_step", PASS, f"{type(t.optimizer).__name__} step changed {changed} of {len(after)} "
                   f"parameter tensors, all finite", changed=changed)

    def grad_accum(self) -> None:
        k = self.cfg.grad_accum
        if k < 2:
            raise _Skip("--grad-accum is 1: nothing to compare")
        micro = max(1, self.batch // k)
        ds = self.wl.dataset(self.cfg.size, micro * k, self.cfg.seed)

        def grads(batch: int, accum: int) -> dict[str, torch.Tensor]:
            loader = make_loader(ds, LoaderConfig(batch_size=batch, shuffle=False, seed=self.cfg.seed))
            t = build_trainer(self.run_config(precision="fp32", batch_size=batch, grad_accum=accum, num_workers=0),
                              loader=loader)
            with _eval_mode(t.model), t.precision.context(t.device):
                t.step()
            return {n: p.grad.detach().double().cpu() for n, p in t.model.named_parameters() if p.grad is not None}

        acc, big = grads(micro, k), grads(micro * k, 1)
        if acc.keys() != big.keys():
            self.check("grad_accum", FAIL, "accumulation and one large batch give gradients to different tensors",
                       "parameters used only on some batches: make every step touch the same parameters")
            return
        ref = _global_norm(big.values())
        diff = _global_norm(acc[n] - big[n] for n in big)
        rel = diff / ref if ref > 0 else float("inf")
        ratio = _global_norm(acc.values()) / ref if ref > 0 else float("nan")
        tol = GRAD_RTOL.get(self.device.type, GRAD_RTOL["cuda"])
        bn = sorted(n for n in self.module_kinds if "BatchNorm" in n)
        mode = "eval mode, so every sample's gradient is independent of its batch"
        if bn:
            mode += (f" ({', '.join(bn)}: in train mode each micro-batch is normalized by its own statistics, so "
                     f"accumulated gradients legitimately differ there)")
        what = f"{k} micro-batches of {micro} vs one batch of {micro * k}, fp32, {mode}"
        metrics = dict(rel_diff=rel, norm_ratio=ratio, k=k, tolerance=tol)
        if rel <= tol:
            self.check("grad_accum", PASS, f"{what}: relative gradient difference {rel:.1e} <= {tol:.0e}", **metrics)
            return
        if abs(ratio - 1 / k) < 0.05 / k:
            fix = (f"accumulated gradients are {k}x too small: the loss sums over the batch instead of averaging "
                   f"(use reduction='mean'; the trainer divides each micro-batch loss by k)")
        elif abs(ratio - k) < 0.05 * k:
            fix = (f"accumulated gradients are {k}x too large: the micro-batch losses are not divided by "
                   f"k={k} (average, do not sum, the k losses)")
        else:
            fix = ("the loss depends on how the batch is split: normalize by a quantity of the whole accumulated "
                   "batch (e.g. total target tokens), not per micro-batch; no cross-sample state in the model")
        self.check("grad_accum", FAIL, f"{what}: relative gradient difference {rel:.2e} > {tol:.0e} "
                   f"(norm ratio {ratio:.3f})", fix, **metrics)

    def checkpoint_save(self) -> None:
        cfg = self.cfg
        workdir = Path(cfg.workdir or self.tmpdir)
        workdir.mkdir(parents=True, exist_ok=True)
        self.checkpoint = workdir / f"preflight-{self.wl.name}.pt"
        plugins = list(cfg.plugins) + [s for s in workload_sources(self.wl) if s not in cfg.plugins]
        self.spec = ResumeSpec(
            workload=self.wl.name, size=cfg.size, precision=cfg.precision, batch_size=self.batch,
            device=str(self.device), seed=cfg.seed, num_workers=self.workers,
            samples=self.batch * (cfg.resume_after + cfg.resume_steps), checkpoint=str(self.checkpoint),
            steps=cfg.resume_steps, plugins=plugins, threads=torch.get_num_threads(),
        )
        trainer, loader = build(self.spec)
        initial = {n: b.detach().clone() for n, b in trainer.model.named_buffers()}
        with trainer.precision.context(trainer.device):
            for _ in range(cfg.resume_after):
                trainer.step()
            t0 = time.perf_counter()
            size = save_checkpoint(self.checkpoint, trainer, loader)
            save_s = time.perf_counter() - t0
            state = torch.load(self.checkpoint, map_location="cpu", weights_only=True)  # what a resume will read
            self.expected = [float(trainer.step()) for _ in range(cfg.resume_steps)]
        self.unsaved = unsaved = unsaved_buffers(trainer.model)
        buffers = dict(trainer.model.named_buffers())
        self.unsaved_changed = [n for n in unsaved if not torch.equal(initial[n], buffers[n].detach())]
        parts = ", ".join(k for k, v in state.items() if v is not None)
        metrics = dict(checkpoint_bytes=size, save_s=save_s)
        if self.unsaved_changed:
            self.check("checkpoint_save", FAIL,
                       f"buffer(s) {', '.join(self.unsaved_changed)} changed during training but are registered "
                       f"with persistent=False, so the checkpoint ({size / 1e6:.1f} MB) does not contain them",
                       "register them with persistent=True (register_buffer(..., persistent=True)) so "
                       "state_dict() saves them", **metrics)
            return
        note = f"; {len(unsaved)} non-persistent buffer(s) unchanged by training" if unsaved else ""
        self.check("checkpoint_save", PASS, f"{size / 1e6:.1f} MB in {save_s:.2f} s after {cfg.resume_after} steps "
                   f"({parts}); loads with weights_only=True{note}", **metrics)

    def resume(self) -> None:
        if self.expected is None or self.checkpoint is None or not self.checkpoint.exists():
            raise _Skip("not run: no checkpoint was written (checkpoint_save item)")
        self.trainer = None  # the fresh process needs the device memory this one is caching
        gc.collect()
        if self.device.type == "cuda":
            torch.cuda.empty_cache()
        spec_path = self.checkpoint.with_suffix(".json")
        spec_path.write_text(self.spec.to_json(), encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # whatever the parent imports
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-m", "trainbench.preflight.resume_child", str(spec_path)],
                                  capture_output=True, text=True, env=env, timeout=self.cfg.child_timeout_s)
        except subprocess.TimeoutExpired:
            self.check("resume", FAIL, f"the fresh process did not finish within {self.cfg.child_timeout_s:.0f} s",
                       "run it by hand: python -m trainbench.preflight.resume_child " + str(spec_path))
            return
        dt = time.perf_counter() - t0
        out = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not out:
            tail = " | ".join(proc.stderr.strip().splitlines()[-3:])
            self.check("resume", FAIL, f"the fresh process failed (exit {proc.returncode}): {tail}",
                       "the workload must be importable in a new process: register it from a module or conftest "
                       "and pass it with --plugin")
            return
        result = json.loads(out[-1])
        self.child_losses = [float(x) for x in result["losses"]]
        self.check("resume", PASS, f"a fresh process loaded the checkpoint and ran {len(self.child_losses)} steps "
                   f"in {dt:.1f} s (resumed at step {result['steps_done'] - len(self.child_losses)})", resume_s=dt)

    def next_loss(self) -> None:
        exp, got = self.expected, self.child_losses
        tol = resume_rtol(self.device.type, self.cfg.precision)
        diffs = [abs(a - b) / max(abs(a), 1e-12) for a, b in zip(exp, got)]
        shown = ", ".join(f"{a:.6f} vs {b:.6f}" for a, b in zip(exp, got))
        metrics = dict(expected=exp, resumed=got, max_rel_diff=max(diffs))
        if all(d <= tol for d in diffs):
            how = "bitwise identical" if all(a == b for a, b in zip(exp, got)) else f"within {tol:.0e}"
            self.check("next_loss", PASS, f"next {len(exp)} losses {how} to the uninterrupted run ({shown})", **metrics)
            return
        first_bad = next(i for i, d in enumerate(diffs) if d > tol)
        if first_bad == 0:
            unsaved = self.unsaved_changed or self.unsaved
            fix = ("the first step after resuming differs, so the model state or the data position was not "
                   "restored: " + (f"buffers with persistent=False ({', '.join(unsaved)}) "
                                   "are not in the checkpoint; " if unsaved else "")
                   + "save every tensor the forward pass reads, the loader's state_dict and the RNG state")
        else:
            fix = ("the first step matches but a later one differs: optimizer, GradScaler or LR-scheduler state "
                   "is not restored")
        self.check("next_loss", FAIL, f"losses after resuming differ from the uninterrupted run ({shown}; "
                   f"max relative difference {max(diffs):.2e})", fix, **metrics)

    def overfit(self) -> None:
        cfg = self.cfg
        trainer = build_trainer(self.run_config(dataset_samples=self.batch, num_workers=0))
        with trainer.precision.context(trainer.device):
            losses = [float(trainer.step()) for _ in range(cfg.overfit_steps)]
        first, late = losses[0], sum(losses[-3:]) / len(losses[-3:])
        metrics = dict(loss_first=first, loss_last=losses[-1], steps=cfg.overfit_steps)
        if not all(math.isfinite(x) for x in losses):
            self.check("overfit", FAIL, f"the loss became inf/NaN while fitting one batch: {losses}",
                       "lower the learning rate; check the loss for log(0) or overflow", **metrics)
            return
        drop = 1 - late / first if first else 0.0
        what = (f"one batch of {self.batch} repeated {cfg.overfit_steps} steps: loss {first:.4f} -> {losses[-1]:.4f} "
                f"(mean of the last 3: {late:.4f})")
        if drop >= cfg.overfit_drop:
            self.check("overfit", PASS, f"{what}, -{drop:.0%}", **metrics)
            return
        self.check("overfit", FAIL, f"{what}: fell {drop:.1%}, less than {cfg.overfit_drop:.0%}",
                   "a model that cannot memorize one batch will not learn: check the learning rate (not ~0), "
                   "that labels are fixed per sample (not redrawn each time), that the loss uses the model "
                   "output and the optimizer holds the model's parameters", **metrics)

    def fp16(self) -> None:
        cfg = self.cfg
        trainer = build_trainer(self.run_config(precision="fp16", dataset_samples=self.batch * cfg.fp16_steps,
                                                num_workers=0))
        scaler = trainer.scaler
        scales, losses = [scaler.get_scale()], []
        with trainer.precision.context(trainer.device):
            for _ in range(cfg.fp16_steps):
                losses.append(float(trainer.step()))
                scales.append(scaler.get_scale())
        skipped = sum(b < a for a, b in zip(scales, scales[1:]))  # the scaler halves its scale on a skipped step
        params_ok = all(_finite(p.detach()) for p in trainer.model.parameters())
        metrics = dict(losses=losses, scale_first=scales[0], scale_last=scales[-1], skipped=skipped)
        where = "CPU autocast float16 + GradScaler('cpu')" if self.device.type == "cpu" else "CUDA AMP float16 + GradScaler"
        if not all(math.isfinite(x) for x in losses) or not params_ok:
            self.check("fp16", FAIL, f"{where}: inf/NaN in {'the losses' if params_ok else 'the parameters'} "
                       f"({', '.join(f'{x:.4g}' for x in losses)})",
                       "a value overflows float16 (max 65504): keep the loss and softmax in fp32 (autocast does "
                       "for F.cross_entropy), use torch.finfo(dtype).min instead of -1e9 in masks; or use bf16",
                       **metrics)
            return
        if skipped == cfg.fp16_steps:
            self.check("fp16", FAIL, f"{where}: GradScaler skipped all {skipped} steps (scale {scales[0]:.0f} -> "
                       f"{scales[-1]:.3g}): gradients overflow at every scale",
                       "find the layer producing inf gradients (backward item); keep it in fp32", **metrics)
            return
        self.check("fp16", PASS, f"{where}: {cfg.fp16_steps} steps, losses finite "
                   f"({losses[0]:.4f} -> {losses[-1]:.4f}), scale {scales[0]:.0f} -> {scales[-1]:.0f}, "
                   f"{skipped} step(s) skipped", **metrics)

    def run(self) -> list[Check]:
        try:
            self.precision.check(self.device)
        except UnsupportedPrecision as exc:  # the forward pass is where it would break: fail there
            return [Check(n, G, FAIL, f"--precision={self.precision.name} cannot run on {self.device}: {exc}",
                          "pick a precision this device supports (the message says which)", workload=self.wl.name)
                    if n == "forward" else
                    Check(n, G, NA, f"not run: --precision={self.precision.name} is unsupported here", workload=self.wl.name)
                    for n in PIPELINE_ITEMS if self.cfg.items is None or n in self.cfg.items]
        with tempfile.TemporaryDirectory(prefix="trainbench-preflight-") as tmp:
            self.tmpdir = tmp
            self.item("loader", self.loader)
            self.item("forward", self.forward, ("loader",))
            self.item("backward", self.backward, ("forward",))
            self.item("optimizer_step", self.optimizer_step, ("backward",))
            self.item("grad_accum", self.grad_accum, ("forward",))
            self.item("checkpoint_save", self.checkpoint_save, ("loader",))
            self.item("resume", self.resume)  # also after a failed save: show what a resume would do
            self.item("next_loss", self.next_loss, ("resume",))
            self.item("overfit", self.overfit, ("forward",))
            self.item("fp16", self.fp16, ("forward",))
        return [self.checks[n] for n in PIPELINE_ITEMS if n in self.checks]


def pipeline_checks(cfg: PipelineConfig) -> list[Check]:
    """Run the pipeline items for `cfg.workload`; never raises for a broken workload."""
    if cfg.items is not None:
        unknown = sorted(set(cfg.items) - set(PIPELINE_ITEMS))
        if unknown:
            raise InputError(f"unknown preflight item(s) {', '.join(unknown)}; known: {', '.join(PIPELINE_ITEMS)}")
    return _Run(cfg).run()
