import os
import sys
from pathlib import Path

import torch
import torch._dynamo  # noqa: F401

# One intra-op thread: the tests check behaviour, not speed, and two threads on a shared 2-core
# machine oversubscribe it (measured: a 2-thread tiny GPT step ran ~12x slower under load).
torch.set_num_threads(1)

# The project's tests check behaviour, not speed: no time floors on warm-up and window (the
# defaults add ~2.5 s to every training benchmark). Tests of the floors pass the options.
os.environ.setdefault("TRAINBENCH_MIN_WARMUP_S", "0")
os.environ.setdefault("TRAINBENCH_MIN_WINDOW_S", "0")

pytest_plugins = ["pytester"]

# shared test helpers (results_factory, cost_toy_workloads) live beside this file; the test
# folders mirror the packages under plugin/
sys.path.insert(0, str(Path(__file__).parent))

# pytester runs sessions in-process and afterwards drops the modules they imported. torch
# registers C++ operator libraries when some of its modules are first imported (optimizers pull
# in torch._dynamo lazily) and refuses to do it twice, so those are imported once, above.
