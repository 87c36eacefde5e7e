"""Two small workloads for the cost/memory/select tests (not registered globally).

`toy-gpt`: embedding -> pre-norm attention block (SDPA, causal) -> MLP (GELU) -> tied head,
AdamW. `toy-cnn`: conv + BatchNorm + ReLU blocks -> pooled linear head, SGD with momentum.
Sizes: "tiny" (the CPU default) and "wide" (a larger configuration for the 10% check).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from trainbench.workloads import Workload

GPT_SIZES = {
    "tiny": dict(vocab=64, d=32, heads=2, layers=2, seq=16),
    "wide": dict(vocab=256, d=128, heads=4, layers=3, seq=64),
}
CNN_SIZES = {"tiny": dict(width=8, blocks=2, res=16, classes=10), "wide": dict(width=32, blocks=3, res=32, classes=100)}


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):  # (B, T, C)
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class ToyGPT(nn.Module):
    def __init__(self, vocab, d, heads, layers, seq):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight  # tied embeddings

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


class TokenData(Dataset):
    def __init__(self, vocab, seq, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randint(0, vocab, (n, seq + 1), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"tokens": self.x[i]}


def gpt_loss(model, batch):
    tok = batch["tokens"]
    logits = model(tok[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), tok[:, 1:].flatten())


def gpt_flops(size):
    c = GPT_SIZES[size]
    n = c["layers"] * 12 * c["d"] ** 2 + c["vocab"] * c["d"]
    return 3 * 2 * n * c["seq"]


class ToyCNN(nn.Module):
    def __init__(self, width, blocks, res, classes):
        super().__init__()
        layers, cin = [], 3
        for i in range(blocks):
            cout = width * 2**i
            conv = nn.Conv2d(cin, cout, 3, stride=2 if i else 1, padding=1, bias=False)
            layers += [conv, nn.BatchNorm2d(cout), nn.ReLU()]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


class ImageData(Dataset):
    def __init__(self, res, classes, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randint(0, 256, (n, 3, res, res), generator=g, dtype=torch.uint8)
        self.y = torch.randint(0, classes, (n,), generator=g)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"image": self.x[i], "label": self.y[i]}


def cnn_loss(model, batch):
    x = batch["image"].float() / 255.0
    return F.cross_entropy(model(x), batch["label"])


def cnn_flops(size):
    c = CNN_SIZES[size]
    return 3 * 2 * 1e5 * c["width"] * c["res"]  # stand-in: only its scaling matters in tests


TOY_GPT = Workload(
    name="toy-gpt",
    model=lambda size: ToyGPT(**GPT_SIZES[size]),
    dataset=lambda size, n, seed: TokenData(GPT_SIZES[size]["vocab"], GPT_SIZES[size]["seq"], n, seed),
    loss=gpt_loss,
    optimizer=lambda params, size: torch.optim.AdamW(params, lr=1e-3, weight_decay=0.1),
    flops_per_sample=gpt_flops,
    epoch_samples=100_000,
    batch_size={"tiny": 4, "wide": 8},
    sizes=("tiny", "wide"),
)

TOY_CNN = Workload(
    name="toy-cnn",
    model=lambda size: ToyCNN(**CNN_SIZES[size]),
    dataset=lambda size, n, seed: ImageData(CNN_SIZES[size]["res"], CNN_SIZES[size]["classes"], n, seed),
    loss=cnn_loss,
    optimizer=lambda params, size: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    flops_per_sample=cnn_flops,
    epoch_samples=50_000,
    batch_size={"tiny": 8, "wide": 16},
    sizes=("tiny", "wide"),
)

TOY_WORKLOADS = (TOY_GPT, TOY_CNN)
