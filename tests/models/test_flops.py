"""Must-show 4: the analytic FLOPs per sample agree with torch's FlopCounterMode.

FlopCounterMode counts matmuls, convolutions and attention kernels (forward and backward) with
a multiply-add = 2 FLOPs, the convention of the models' docstrings. The full presets are
measured on the `meta` device (shapes only, nothing allocated), forward + backward of one
training step; the tiny presets also on real CPU tensors. On CPU the fused SDPA kernel has no
FLOP formula in torch, so real-tensor runs use the math backend (plain matmuls, counted the same).
"""

from __future__ import annotations

import contextlib

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from trainbench.models import bert, gpt, resnet

FAMILIES = {"resnet": resnet, "bert": bert, "gpt": gpt}


def _batch(family: str, cfg, n: int, device: str) -> tuple[torch.Tensor, ...]:
    g = None if device == "meta" else torch.Generator().manual_seed(0)
    if family == "resnet":
        size = (n, 3, cfg.image_size, cfg.image_size)
        return (torch.randn(size, generator=g, device=device),)
    T = cfg.seq_len if family == "bert" else cfg.block_size
    ids = torch.randint(0, cfg.vocab_size, (n, T), generator=g, device=device)
    return (ids, torch.ones_like(ids)) if family == "bert" else (ids,)


def _measure(family: str, size: str, device: str, n: int = 2) -> tuple[float, float]:
    """(forward, forward + backward) FLOPs per sample counted by FlopCounterMode."""
    mod = FAMILIES[family]
    with torch.device(device):
        model = mod.build(size)
    batch = _batch(family, model.cfg, n, device)
    backend = sdpa_kernel(SDPBackend.MATH) if device == "cpu" else contextlib.nullcontext()
    counter = FlopCounterMode(display=False)
    with backend, counter:
        out = model(*batch)
        forward = counter.get_total_flops()
        out.float().sum().backward()
    return forward / n, counter.get_total_flops() / n


@pytest.mark.parametrize("family", FAMILIES)
def test_full_preset_training_flops_match_flop_counter_within_5_percent(family):
    mod = FAMILIES[family]
    cfg = mod.PRESETS["full"]
    forward, train = _measure(family, "full", "meta", n=1)
    assert train == pytest.approx(mod.train_flops_per_sample(cfg), rel=0.05)
    assert forward == pytest.approx(mod.forward_flops_per_sample(cfg), rel=0.05)
    # the convention is tighter than the 5% the issue asks: only the ops it names are left out
    assert train == pytest.approx(mod.train_flops_per_sample(cfg), rel=1e-3)


@pytest.mark.parametrize("family", FAMILIES)
def test_tiny_preset_flops_match_on_real_tensors(family):
    mod = FAMILIES[family]
    cfg = mod.PRESETS["tiny"]
    forward, train = _measure(family, "tiny", "cpu", n=2)
    assert forward == pytest.approx(mod.forward_flops_per_sample(cfg), rel=1e-3)
    assert train == pytest.approx(mod.train_flops_per_sample(cfg), rel=1e-3)


def test_flops_scale_with_the_sample_shape():
    # guards against a formula that ignores a field: 2x image side -> ~4x conv FLOPs, and
    # attention makes text FLOPs grow faster than linearly in the sequence length
    r = resnet.PRESETS["full"]
    ratio = resnet.forward_flops_per_sample(resnet.ResNetConfig(image_size=448)) / (
        resnet.forward_flops_per_sample(r)
    )
    assert ratio == pytest.approx(4.0, rel=0.01)
    short = gpt.forward_flops_per_sample(gpt.GPTConfig(block_size=512))
    assert gpt.forward_flops_per_sample("full") > 2 * short


def test_published_figures():
    # torchvision lists ResNet-50 at 4.09 GMACs for 224 px
    assert resnet.forward_flops_per_sample("full") / 2 == pytest.approx(4.09e9, rel=0.005)
    # PaLM appendix B: training FLOPs per token = 6N + 12 L T C, N = matmul weights incl. head
    with torch.device("meta"):
        model = gpt.build("full")
    cfg = model.cfg
    n_matmul = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    per_token = 6 * n_matmul + 12 * cfg.n_layer * cfg.block_size * cfg.n_embd
    assert gpt.train_flops_per_sample(cfg) / cfg.block_size == pytest.approx(per_token, rel=1e-9)
