"""`--compile`: torch.compile modes, and the compile warm-up that keeps compilation out of the
measured window.

  none          eager (the default)
  default       torch.compile(model), inductor with default settings
  max-autotune  torch.compile(model, mode="max-autotune"): autotuned GEMMs / CUDA graphs, slow to compile
  regional      each repeated block compiled on its own (`harness/blocks.py`): the block is
                compiled once and reused, so compile time stays that of one layer

Compilation happens in the first steps. `compile_warmup` runs steps until one adds no new
graph (dynamo's `unique_graphs` counter stands still), timing them as `compile_s`; the usual
warm-up and the window follow, so no compile and no recompilation lands in the window. The
record gets the graph count, graph breaks (with their reasons) and the recompilations seen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from torch import nn

from ..errors import InputError
from .blocks import repeated_blocks

__all__ = ["COMPILE_MODES", "CompileInfo", "apply_compile", "compile_warmup"]

COMPILE_MODES = ("none", "default", "max-autotune", "regional")
MAX_COMPILE_STEPS = 10  # a model still recompiling after this many steps is reported, not hidden


@dataclass
class CompileInfo:
    mode: str
    compile_s: float = 0.0  # wall time of the steps until one compiles nothing (that one included), synced
    compile_steps: int = 0
    graphs: int = 0  # distinct graphs dynamo compiled
    graph_breaks: int = 0
    break_reasons: list[str] = field(default_factory=list)
    stable: bool = True  # False: still compiling new graphs after MAX_COMPILE_STEPS
    compiled_blocks: int = 0  # regional: blocks compiled one by one

    def as_config(self) -> dict[str, Any]:
        return {"compile": self.mode, "compile_steps": self.compile_steps, "compile_graphs": self.graphs,
                "compile_graph_breaks": self.graph_breaks, "compile_break_reasons": self.break_reasons[:10],
                "compile_stable": self.stable, "compile_regional_blocks": self.compiled_blocks}


def _check(mode: str) -> None:
    if mode not in COMPILE_MODES:
        raise InputError(f"--compile={mode}: unknown mode; known: {', '.join(COMPILE_MODES)}")


def apply_compile(model: nn.Module, mode: str) -> tuple[nn.Module, CompileInfo]:
    """Compile `model` in place (`nn.Module.compile`: names and state dict unchanged)."""
    _check(mode)
    info = CompileInfo(mode)
    if mode == "none":
        return model, info
    import torch._dynamo

    torch._dynamo.reset()  # this benchmark's compile time and graphs, not an earlier one's cache
    if mode == "regional":
        blocks = repeated_blocks(model)
        if not blocks:
            raise InputError(f"--compile=regional: {type(model).__name__} has no repeated block to compile")
        for block in blocks:
            block.compile()
        info.compiled_blocks = len(blocks)
    else:
        model.compile(mode=None if mode == "default" else mode)
    return model, info


def _counts() -> tuple[int, int, list[str]]:
    from torch._dynamo.utils import counters

    breaks = counters["graph_break"]
    return counters["stats"]["unique_graphs"], sum(breaks.values()), sorted(breaks)


def compile_warmup(trainer, info: CompileInfo) -> CompileInfo:
    """Steps until a step compiles nothing new; fills `info` (no-op for mode none)."""
    if info.mode == "none":
        return info
    from torch._dynamo.utils import counters

    counters.clear()
    clock = trainer.clock
    clock.synchronize()
    t0 = time.perf_counter()
    seen = -1
    for step in range(1, MAX_COMPILE_STEPS + 1):
        trainer.step()
        graphs, _, _ = _counts()
        info.compile_steps = step
        if graphs == seen:
            break
        seen = graphs
    else:
        info.stable = False
    clock.synchronize()
    info.compile_s = time.perf_counter() - t0
    info.graphs, info.graph_breaks, info.break_reasons = _counts()
    return info
