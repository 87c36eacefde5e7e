"""The fresh process of the resume check: rebuild the run from a `ResumeSpec`, load the
checkpoint, run the next steps and print their losses as one JSON line on stdout.

    python -m trainbench.preflight.resume_child SPEC.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from .plugins import load_plugin
from .resume import ResumeSpec, build, load_checkpoint


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    spec = ResumeSpec.from_json(Path(argv[0]).read_text(encoding="utf-8"))
    if spec.threads > 0:
        torch.set_num_threads(spec.threads)
    for plugin in spec.plugins:
        load_plugin(plugin)
    trainer, loader = build(spec)
    load_checkpoint(spec.checkpoint, trainer, loader)
    with trainer.precision.context(trainer.device):
        losses = [float(trainer.step()) for _ in range(spec.steps)]
    print(json.dumps({"losses": losses, "steps_done": trainer.steps_done}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
