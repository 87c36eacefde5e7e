import sys
from pathlib import Path

import torch
import torch._dynamo  # noqa: F401

# One intra-op thread: the tests check behaviour, not speed, and two threads on a shared 2-core
# machine oversubscribe it (measured: a 2-thread tiny GPT step ran ~12x slower under load).
torch.set_num_threads(1)

pytest_plugins = ["pytester"]

# shared test helpers (results_factory, cost_toy_workloads) live beside this file; the test
# folders mirror the packages under plugin/
sys.path.insert(0, str(Path(__file__).parent))

# pytester runs sessions in-process and afterwards drops the modules they imported. torch
# registers C++ operator libraries when some of its modules are first imported (optimizers pull
# in torch._dynamo lazily) and refuses to do it twice, so those are imported once, above.
