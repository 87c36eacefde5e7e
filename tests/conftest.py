import torch._dynamo  # noqa: F401

pytest_plugins = ["pytester"]

# pytester runs sessions in-process and afterwards drops the modules they imported. torch
# registers C++ operator libraries when some of its modules are first imported (optimizers pull
# in torch._dynamo lazily) and refuses to do it twice, so those are imported once, above.
