"""One workload for N optimizer steps with periodic checkpoints, preemption and `--resume auto`:
the engine of `trainbench train` (plugin/train_cli.py).

Under `torchrun` (RANK / WORLD_SIZE / LOCAL_RANK in the environment) every rank trains a DDP
replica on its shard of the data; rank 0 writes checkpoints, the loss log and --save-final,
with every rank's RNG and loader state gathered into the one file.

Exit: 0 when all steps are done, EXIT_PREEMPTED (75) after a preemption checkpoint.
"""

from __future__ import annotations

import json
import math
import os
import signal
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
from torch.utils.data import Dataset
from torchdata.stateful_dataloader.sampler import StatefulDistributedSampler

from ..records.atomic import atomic_write, atomic_write_text
from .compare import final_state
from .preempt import EXIT_PREEMPTED, MetadataWatcher, Preemption
from .state import capture, check_fingerprint, rank_state, restore
from .object_store import open_store
from .store import CheckpointStore, LoadedCheckpoint, SavedCheckpoint
from ..data import LoaderConfig, make_loader
from ..errors import InputError
from ..harness.run import RunConfig, build_trainer, resolve_device
from ..harness.progress import progress as current_progress
from ..workloads import get_workload

__all__ = ["TrainJobConfig", "JobResult", "run_job", "INDEX_KEY", "HOLD_ENV"]

INDEX_KEY = "__sample_index__"  # added to every sample so the loss log can say what each step saw
# Test hook: "K" -> after step K (and its checkpoint) wait up to 60 s for a signal, so a kill
# test can hit an exact step. Prints "held at step K" to stderr.
HOLD_ENV = "TRAINBENCH_TEST_HOLD_AT_STEP"


@dataclass
class TrainJobConfig:
    workload: str
    steps: int  # total optimizer steps of the run; a resumed run continues up to this
    size: str = "tiny"
    precision: str = "fp32"
    batch_size: int | None = None  # per-rank micro-batch; None = the workload's default
    grad_accum: int = 1
    seed: int = 0
    device: str = "auto"
    num_workers: int = 0  # loader worker processes (resumable mid-epoch with any count)
    dataset_samples: int | None = None  # None = one epoch covers the whole run
    lr_warmup: int | None = None  # linear warm-up steps, then cosine to 10%; None = steps // 10
    checkpoint_dir: str | None = None
    checkpoint_every: int = 0  # steps between periodic checkpoints; 0 = only at preemption and the end
    keep: int = 3  # newest checkpoints kept
    resume: str = "never"  # "auto": continue from the latest valid checkpoint in checkpoint_dir
    overwrite: bool = False  # resume "never" into a directory with checkpoints: delete them first
    s3_endpoint: str | None = None  # checkpoint_dir s3://...: endpoint (None = AWS's, or $AWS_ENDPOINT_URL)
    save_final: str | None = None  # final model + optimizer as a flat dict of tensors
    loss_log: str | None = None  # JSON lines: step, epoch, loss, sample indices
    summary_json: str | None = None  # what happened: saves, timings, resume point, exit code
    deterministic: bool = False  # torch.use_deterministic_algorithms(True), no cudnn autotune
    threads: int | None = None  # torch intra-op threads; fixed for bitwise CPU comparisons
    preempt_signal: int = int(signal.SIGUSR1)  # second graceful-stop signal besides SIGTERM
    preempt_watch: str | None = None  # "aws" | "gcp": poll the metadata server for a notice
    metadata_url: str | None = None  # override the metadata server (tests: a local fake)
    preempt_poll_s: float = 5.0
    finetune: str = "full"  # full | lora: a LoRA checkpoint holds the frozen base and the adapters

    def identity(self, world_size: int) -> dict[str, Any]:
        """Settings a resume must share with the run that saved (the config fingerprint)."""
        keys = ("workload", "size", "precision", "batch_size", "grad_accum", "seed", "num_workers",
                "dataset_samples", "steps", "lr_warmup", "finetune")
        return {**{k: getattr(self, k) for k in keys}, "world_size": world_size}


@dataclass
class JobResult:
    status: str  # "completed" | "preempted"
    exit_code: int
    steps_done: int
    start_step: int
    reason: str | None = None  # what stopped a preempted run (signal name, metadata notice)
    resumed_from: str | None = None
    skipped: list[list[str]] = field(default_factory=list)  # [path, why] passed over on resume
    load_s: float | None = None
    saves: list[dict[str, Any]] = field(default_factory=list)  # step, bytes, write_s, capture_s, save_s

    def metrics(self) -> dict[str, Any]:
        save_s = [s["save_s"] for s in self.saves]
        return {
            "ckpt_bytes": self.saves[-1]["bytes"] if self.saves else None,
            "ckpt_save_s": statistics.median(save_s) if save_s else None,
            "ckpt_load_s": self.load_s,
        }


class _Indexed(Dataset):
    def __init__(self, dataset: Dataset):
        self.dataset = dataset

    def __len__(self) -> int:
        return len(self.dataset)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {**self.dataset[i], INDEX_KEY: i}


class _SeenIndices(Iterator):
    """Between the epochs and the Trainer: strips the index key and remembers it."""

    def __init__(self, epochs: Iterator):
        self.epochs = epochs
        self.seen: list[int] = []

    def __next__(self) -> dict[str, Any]:
        batch = dict(next(self.epochs))
        idx = batch.pop(INDEX_KEY, None)
        if idx is not None:
            self.seen.extend(int(i) for i in idx)
        return batch

    def take(self) -> list[int]:
        seen, self.seen = self.seen, []
        return seen


@dataclass
class _Dist:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @classmethod
    def from_env(cls) -> "_Dist":
        if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) <= 1:
            return cls()
        return cls(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ.get("LOCAL_RANK", 0)))

    @property
    def active(self) -> bool:
        return self.world_size > 1


def _lr_lambda(warmup: int, total: int) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, total - warmup))
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))  # cosine to 10 %

    return factor


def _say(msg: str) -> None:
    print(f"trainbench train: {msg}", file=sys.stderr, flush=True)


def run_job(cfg: TrainJobConfig, say: Callable[[str], None] = _say) -> JobResult:
    dist = _Dist.from_env()
    if cfg.deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS determinism needs it
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    device = resolve_device(cfg.device)
    if dist.active:
        if device.type == "cuda":
            device = torch.device("cuda", dist.local_rank)
            torch.cuda.set_device(device)
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo")
    try:
        return _run(cfg, dist, device, say)
    finally:
        if dist.active and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


def _run(cfg: TrainJobConfig, dist: _Dist, device: torch.device, say: Callable[[str], None]) -> JobResult:
    if cfg.resume not in ("auto", "never"):
        raise InputError(f"--resume={cfg.resume}: use 'auto' (latest valid checkpoint) or 'never'")
    if cfg.resume == "auto" and not cfg.checkpoint_dir:
        raise InputError("--resume auto needs --checkpoint-dir (where to look for checkpoints)")
    lead = dist.rank == 0
    store = (open_store(cfg.checkpoint_dir, cfg.keep, warn=lambda m: say(f"warning: {m}"), endpoint=cfg.s3_endpoint)
             if cfg.checkpoint_dir else None)
    if store is not None and lead:
        _claim(store, cfg, say)
        store.check_writable()  # a full or read-only disk fails now, not after an hour of training

    workload = get_workload(cfg.workload)
    batch = cfg.batch_size or workload.default_batch_size(cfg.size)
    n = cfg.dataset_samples or batch * cfg.grad_accum * cfg.steps * dist.world_size
    dataset = _Indexed(workload.dataset(cfg.size, n, cfg.seed))
    # epoch e's order is a function of (seed, e) via set_epoch, whatever the worker count; a
    # resumed loader continues it exactly (torchdata's shared-generator shuffling does not:
    # the epoch after a resume can change order, meta-pytorch/data#1437)
    sampler = StatefulDistributedSampler(dataset, num_replicas=dist.world_size, rank=dist.rank, shuffle=True,
                                         seed=cfg.seed)
    loader = make_loader(dataset, LoaderConfig(batch_size=batch, num_workers=cfg.num_workers,
                                               pin_memory=device.type == "cuda", seed=cfg.seed), sampler)
    run_cfg = RunConfig(workload=cfg.workload, size=cfg.size, precision=cfg.precision, batch_size=batch,
                        steps=cfg.steps, warmup=0, grad_accum=cfg.grad_accum, seed=cfg.seed,
                        device=str(device), num_workers=cfg.num_workers, dataset_samples=n, finetune=cfg.finetune)
    warmup = cfg.lr_warmup if cfg.lr_warmup is not None else max(1, cfg.steps // 10)
    def ddp(model):
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)

    wrap = ddp if dist.active else None
    trainer = build_trainer(run_cfg, loader, wrap=wrap, scheduler=lambda opt: torch.optim.lr_scheduler.LambdaLR(
        opt, _lr_lambda(warmup, cfg.steps)))
    epochs = trainer.batches
    seen = _SeenIndices(epochs)
    trainer.batches = seen
    identity = {**cfg.identity(dist.world_size), "batch_size": batch}  # the batch used, not None for "default"
    result = JobResult(status="completed", exit_code=0, steps_done=0, start_step=0)

    if cfg.resume == "auto":
        loaded = store.latest_valid()
        if loaded is not None:
            check_fingerprint(loaded.payload, identity, str(loaded.path))
            restore(trainer, epochs, loaded.payload, dist.rank)
            result.resumed_from, result.load_s = str(loaded.path), loaded.seconds
            result.skipped = [[str(p), why] for p, why in loaded.skipped]
            note = f" (skipped newer: {', '.join(Path(str(p)).name for p, _ in loaded.skipped)})" if loaded.skipped else ""
            if lead:
                say(f"resumed from {loaded.path} (step {loaded.step}, epoch {epochs.epoch}){note}")
        elif lead:
            say(f"no valid checkpoint in {store.directory}: starting at step 0")
    result.start_step = trainer.steps_done
    log = _open_log(cfg.loss_log, result.start_step) if lead and cfg.loss_log else None

    preemption = Preemption()
    watcher = None
    if cfg.preempt_watch:
        watcher = MetadataWatcher(cfg.preempt_watch, preemption, base_url=cfg.metadata_url,
                                  interval_s=cfg.preempt_poll_s)
        watcher.start()
    hold = int(os.environ[HOLD_ENV]) if os.environ.get(HOLD_ENV) else None
    try:
        with preemption.handle((signal.SIGTERM, signal.Signals(cfg.preempt_signal))), \
                trainer.precision.context(trainer.device):
            stop = _agree(preemption.requested, dist, device)
            listener = current_progress() if lead else None  # the CLI's bar, on the lead rank only
            if listener is not None:
                listener.begin("train", time.perf_counter())
                first = trainer.steps_done
            while trainer.steps_done < cfg.steps and not stop:
                t_step = time.perf_counter()
                loss = trainer.step()
                step_s = time.perf_counter() - t_step  # host wall time of the step (loss read back: synced)
                step = trainer.steps_done
                if listener is not None and ((now := time.perf_counter()) >= listener.due or step == cfg.steps):
                    listener.report("train", step - first, cfg.steps - first, 0, now)
                if log is not None:  # epoch: the one the step's last batch came from
                    log.write(json.dumps({"step": step, "epoch": epochs.epoch, "loss": float(loss),
                                          "step_s": step_s, "indices": seen.take()}) + "\n")
                    log.flush()
                seen.take()
                stop = _agree(preemption.requested, dist, device)
                periodic = cfg.checkpoint_every and step % cfg.checkpoint_every == 0
                if store is not None and (periodic or stop or step == cfg.steps):
                    result.saves.append(_save(store, trainer, epochs, identity, dist, lead, say))
                if hold == step:
                    say(f"held at step {step} ({HOLD_ENV})")
                    preemption.wait(60.0)
                    stop = _agree(preemption.requested, dist, device)
                    if stop and store is not None and not (result.saves and result.saves[-1]["step"] == step):
                        result.saves.append(_save(store, trainer, epochs, identity, dist, lead, say))
    finally:
        if watcher is not None:
            watcher.stop()
        if log is not None:
            log.close()

    result.steps_done = trainer.steps_done
    if trainer.steps_done < cfg.steps:
        result.status, result.exit_code, result.reason = "preempted", EXIT_PREEMPTED, preemption.reason
        where = f"checkpoint {result.saves[-1]['path']}" if result.saves else "no new checkpoint (nothing to save)"
        if lead:
            say(f"preempted ({preemption.reason}) after step {trainer.steps_done}: {where}; "
                f"exit {EXIT_PREEMPTED}, rerun with --resume auto")
    elif lead:
        say(f"done: {trainer.steps_done} steps")
    if lead and cfg.save_final and result.status == "completed":
        state = final_state(trainer.model, trainer.optimizer)
        atomic_write(cfg.save_final, lambda f: torch.save(state, f))
    if lead and cfg.summary_json:
        atomic_write_text(cfg.summary_json, json.dumps({**asdict(result), **result.metrics()}, indent=1) + "\n")
    return result


def _claim(store: Any, cfg: TrainJobConfig, say: Callable[[str], None]) -> None:
    """A fresh run (no --resume) never mixes with an earlier run's checkpoints: keep-K would
    delete the new ones by step number and `latest` could name a deleted file."""
    if cfg.resume == "auto" or not store.has_checkpoints():
        return
    if not cfg.overwrite:
        raise InputError(
            f"--checkpoint-dir {store.directory} holds checkpoints of an earlier run; continue it with "
            f"--resume auto, start over with --overwrite (deletes them), or pass a new directory")
    store.clear()
    say(f"--overwrite: removed the earlier checkpoints in {store.directory}")


def _agree(flag: bool, dist: _Dist, device: torch.device) -> bool:
    """Every rank stops at the same step: a preemption seen by any rank stops all."""
    if not dist.active:
        return flag
    t = torch.tensor([1.0 if flag else 0.0], device=device)
    torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
    return bool(t.item())


def _save(store: CheckpointStore, trainer: Any, epochs: Any, identity: dict[str, Any], dist: _Dist,
          lead: bool, say: Callable[[str], None]) -> dict[str, Any]:
    t0 = time.perf_counter()
    mine = rank_state(epochs)
    if dist.active:
        ranks: list[Any] = [None] * dist.world_size
        torch.distributed.all_gather_object(ranks, mine)
    else:
        ranks = [mine]
    info: dict[str, Any] = {"step": trainer.steps_done}
    if lead:
        payload = capture(trainer, epochs, ranks, config=identity)
        capture_s = time.perf_counter() - t0
        saved: SavedCheckpoint = store.save(trainer.steps_done, payload)
        info.update(path=str(saved.path), bytes=saved.bytes, write_s=saved.seconds, capture_s=capture_s,
                    save_s=capture_s + saved.seconds)
        say(f"checkpoint {saved.path} (step {saved.step}, {saved.bytes / 1e6:.1f} MB, {info['save_s']:.3f} s)")
    if dist.active:
        torch.distributed.barrier()  # nobody exits or races ahead while rank 0 writes
    return info


def _open_log(path: str, start_step: int):
    """The loss log, cut back to the steps the resumed state has seen (a hard kill may have
    logged steps after the checkpoint it resumes from: those steps run again)."""
    p = Path(path)
    keep = []
    if start_step > 0 and p.exists():
        from .compare import read_loss_log

        keep = [e for e in read_loss_log(p) if e["step"] <= start_step]
    atomic_write_text(p, "".join(json.dumps(e) + "\n" for e in keep))
    return p.open("a")
