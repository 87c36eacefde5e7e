import torch
import torch._dynamo  # noqa: F401

# One intra-op thread: the tests check behaviour, not speed, and two threads on a shared 2-core
# machine oversubscribe it (measured: a 2-thread tiny GPT step ran ~12x slower under load).
torch.set_num_threads(1)

pytest_plugins = ["pytester"]

# pytester runs sessions in-process and afterwards drops the modules they imported. torch
# registers C++ operator libraries when some of its modules are first imported (optimizers pull
# in torch._dynamo lazily) and refuses to do it twice, so those are imported once, above.
