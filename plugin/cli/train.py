"""`trainbench train`: one workload for N steps with checkpoints, preemption handling and
`--resume auto`; runs under `torchrun` too (rank 0 writes).

Exit codes: 0 all steps done; 75 preempted (SIGTERM, --preempt-signal or a metadata notice):
the step in flight finished and a checkpoint was written -- rerun with --resume auto;
2 bad flag or unusable checkpoint directory/file; 1 anything else.
"""

from __future__ import annotations

import argparse

from ..checkpoint.preempt import EXIT_PREEMPTED, METADATA
from ..harness.precision import PRECISIONS
from .types import nonneg_int, number, positive_int, signal_name
from .progress import add_progress_option

from .command import subcommand

__all__ = ["add_parser"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = subcommand(sub, "train", "train one workload for N steps with checkpoints and --resume auto", __doc__)
    p.add_argument("--workload", required=True)
    p.add_argument("--steps", type=positive_int("--steps"), required=True, help="total optimizer steps of the run")
    p.add_argument("--size", default="tiny", choices=("tiny", "full"))
    p.add_argument("--precision", default="fp32", choices=tuple(PRECISIONS))
    p.add_argument("--batch-size", type=positive_int("--batch-size"), default=None)
    p.add_argument("--grad-accum", type=positive_int("--grad-accum"), default=1)
    p.add_argument("--finetune", choices=("full", "lora"), default="full",
                   help="fine-tuning mode: full, or lora (adapters on workloads with LoRA targets, e.g. llama-1b)")
    p.add_argument("--seed", type=nonneg_int("--seed"), default=0)
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    p.add_argument("--num-workers", type=nonneg_int("--num-workers"), default=0, help="data loader workers")
    p.add_argument("--dataset-samples", type=positive_int("--dataset-samples"), default=None,
                   help="samples per epoch (default: one epoch covers the run); small values make runs cross epochs")
    p.add_argument("--lr-warmup", type=nonneg_int("--lr-warmup"), default=None,
                   help="linear LR warm-up steps before the cosine decay (default steps/10)")
    p.add_argument("--checkpoint-dir", default=None, metavar="DIR",
                   help="a directory, or s3://bucket/prefix (temp key, verified, then `latest` published)")
    p.add_argument("--checkpoint-every", type=nonneg_int("--checkpoint-every"), default=0, metavar="STEPS",
                   help="periodic checkpoint interval (0: only on preemption and at the end)")
    p.add_argument("--keep", type=positive_int("--keep"), default=3, help="newest checkpoints kept (default 3)")
    p.add_argument("--resume", choices=("auto", "never"), default="never",
                   help="auto: continue from the latest valid checkpoint in --checkpoint-dir (fresh start if none)")
    p.add_argument("--overwrite", action="store_true",
                   help="without --resume: delete the checkpoints already in --checkpoint-dir and start at step 0")
    p.add_argument("--s3-endpoint", default=None, metavar="URL",
                   help="endpoint for an s3:// --checkpoint-dir (default: AWS's, or $AWS_ENDPOINT_URL); "
                        "credentials from the usual AWS_* variables")
    p.add_argument("--save-final", default=None, metavar="PATH",
                   help="write final model + optimizer state (flat dict of tensors, weights_only-loadable)")
    p.add_argument("--loss-log", default=None, metavar="PATH",
                   help="JSON lines: per-step loss and the sample indices the step consumed")
    p.add_argument("--summary-json", default=None, metavar="PATH",
                   help="JSON summary: status, resume point, checkpoint sizes and save/load times")
    p.add_argument("--deterministic", action="store_true",
                   help="torch.use_deterministic_algorithms(True): bitwise-reproducible resumes on CPU")
    p.add_argument("--threads", type=positive_int("--threads"), default=None, help="torch intra-op threads")
    p.add_argument("--preempt-signal", type=signal_name("--preempt-signal"), default="SIGUSR1",
                   help="a second signal that stops gracefully like SIGTERM (default SIGUSR1)")
    p.add_argument("--preempt-watch", choices=tuple(METADATA), default=None,
                   help="poll the cloud metadata server for a spot/preemption notice (off by default)")
    p.add_argument("--metadata-url", default=None, help="metadata server base URL (default: the cloud's)")
    p.add_argument("--preempt-poll-s", type=number("--preempt-poll-s"), default=5.0, help="metadata poll interval in seconds")
    add_progress_option(p)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import warnings

    from ..checkpoint.resumable import TrainJobConfig, run_job
    from .progress import cli_progress

    # torchdata 0.11 calls a deprecated torch API on every loader construction: noise, not news
    warnings.filterwarnings("ignore", "'set_vital' is deprecated")

    cfg = TrainJobConfig(
        workload=args.workload, steps=args.steps, size=args.size, precision=args.precision,
        batch_size=args.batch_size, grad_accum=args.grad_accum, seed=args.seed, device=args.device,
        num_workers=args.num_workers, dataset_samples=args.dataset_samples, lr_warmup=args.lr_warmup,
        checkpoint_dir=args.checkpoint_dir, checkpoint_every=args.checkpoint_every, keep=args.keep,
        resume=args.resume, overwrite=args.overwrite, s3_endpoint=args.s3_endpoint, save_final=args.save_final, loss_log=args.loss_log, summary_json=args.summary_json,
        deterministic=args.deterministic, threads=args.threads, preempt_signal=int(args.preempt_signal),
        preempt_watch=args.preempt_watch, metadata_url=args.metadata_url, preempt_poll_s=args.preempt_poll_s,
        finetune=args.finetune,
    )
    with cli_progress(args.progress, args.workload):
        return run_job(cfg).exit_code  # 0, or EXIT_PREEMPTED after a preemption checkpoint
