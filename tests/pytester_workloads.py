"""Source text of a tiny user workload for pytester conftests (tests/pytest_plugin/)."""

# a seeded (x, label) data set of 8 features: what a user's conftest would register
PAIRS_DATASET = """
import torch
from torch import nn
import torch.nn.functional as F
from trainbench.workloads import Workload

class Pairs(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x, self.y = torch.randn(n, 8, generator=g), torch.randint(0, 2, (n,), generator=g)
    def __len__(self): return len(self.x)
    def __getitem__(self, i): return {"x": self.x[i], "y": self.y[i]}
"""
