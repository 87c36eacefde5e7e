"""ResNet-50 v1.5 in plain PyTorch, one file.

He et al. 2015, "Deep Residual Learning for Image Recognition" (arXiv:1512.03385), with the
"v1.5" change used by torchvision and NVIDIA's reference: in a downsampling bottleneck the
stride sits in the 3x3 conv, not the first 1x1 (about +0.5% top-1, a little more compute).
The full preset has torchvision's `resnet50()` parameter count, 25,557,032.

Init: Kaiming-normal (fan_out, ReLU) for convs, BN weight 1 and bias 0, and the last BN of every
bottleneck starts at gamma = 0 so each residual block begins as the identity (Goyal et al. 2017,
"Accurate, Large Minibatch SGD", section 5.1; torchvision's `zero_init_residual=True`).
The Linear head keeps PyTorch's default init. Parameter counts do not depend on this choice.
Module names match torchvision's (`layer3.2.conv2.weight`, `downsample.0`, `fc`), so a
torchvision state dict loads with `load_state_dict` as is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "ResNetConfig",
    "PRESETS",
    "ResNet",
    "build",
    "forward_flops_per_sample",
    "train_flops_per_sample",
]


@dataclass(frozen=True)
class ResNetConfig:
    # bottleneck blocks in each of the 4 stages; (3, 4, 6, 3) is ResNet-50 ((3, 4, 23, 3): -101)
    layers: tuple[int, ...] = (3, 4, 6, 3)
    # channels of the stem and of the first stage's 3x3 convs; doubled per stage, x4 at the
    # bottleneck output (64 -> 256, 512, 1024, 2048 output channels for ResNet-50)
    width: int = 64
    # ImageNet-1k classes
    num_classes: int = 1000
    # training crop side in pixels (RandomResizedCrop 224 in the reference recipe)
    image_size: int = 224


EXPANSION = 4  # bottleneck output channels = 4 x its inner width (paper, table 1)

PRESETS: dict[str, ResNetConfig] = {
    # same code paths (stem, maxpool, bottlenecks with downsample shortcut in every stage, BN,
    # head), ~0.1 M parameters, 32 px images: a training step at batch 16 takes a few ms on a core
    "tiny": ResNetConfig(layers=(1, 1, 1, 1), width=8, num_classes=10, image_size=32),
    "full": ResNetConfig(),
}


class Bottleneck(nn.Module):
    """1x1 reduce -> 3x3 (carries the stride: v1.5) -> 1x1 expand, plus the shortcut."""

    def __init__(self, in_ch: int, width: int, stride: int) -> None:
        super().__init__()
        out_ch = width * EXPANSION
        self.conv1 = nn.Conv2d(in_ch, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_ch, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_ch)
        # projection shortcut (paper's option B) only where the shape changes
        self.downsample = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False), nn.BatchNorm2d(out_ch)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.downsample is None else self.downsample(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, cfg: ResNetConfig) -> None:
        super().__init__()
        self.cfg = cfg
        w = cfg.width
        # stem: 7x7/2 conv + 3x3/2 max pool, 224 -> 56 px
        self.conv1 = nn.Conv2d(3, w, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(w)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.in_ch = w
        # stage i: width w * 2^i; the first stage keeps the resolution, the others halve it
        self.layer1 = self._make_layer(w, cfg.layers[0], stride=1)
        self.layer2 = self._make_layer(w * 2, cfg.layers[1], stride=2)
        self.layer3 = self._make_layer(w * 4, cfg.layers[2], stride=2)
        self.layer4 = self._make_layer(w * 8, cfg.layers[3], stride=2)
        self.fc = nn.Linear(w * 8 * EXPANSION, cfg.num_classes)
        self._init_weights()

    def _make_layer(self, width: int, blocks: int, stride: int) -> nn.Sequential:
        layers = [Bottleneck(self.in_ch, width, stride)]
        self.in_ch = width * EXPANSION
        layers += [Bottleneck(self.in_ch, width, 1) for _ in range(blocks - 1)]
        return nn.Sequential(*layers)

    def _init_weights(self) -> None:
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        for m in self.modules():
            if isinstance(m, Bottleneck):
                nn.init.zeros_(m.bn3.weight)  # zero-init residual: each block starts as identity

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (B, 3, H, W) float, already normalized -> logits (B, num_classes)
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)  # (B, 2048) for ResNet-50
        return self.fc(x)


def _config(size_or_config: str | ResNetConfig) -> ResNetConfig:
    if isinstance(size_or_config, ResNetConfig):
        return size_or_config
    if size_or_config not in PRESETS:
        raise ValueError(
            f"unknown ResNet size {size_or_config!r}; known sizes: {', '.join(PRESETS)}"
        )
    return PRESETS[size_or_config]


def build(size_or_config: str | ResNetConfig = "full") -> ResNet:
    """A freshly initialised model for a PRESETS key or a ResNetConfig (on the default device)."""
    return ResNet(_config(size_or_config))


def _conv_out(size: int, kernel: int, stride: int, padding: int) -> int:
    return (size + 2 * padding - kernel) // stride + 1


def _stem_flops(cfg: ResNetConfig) -> float:
    s = _conv_out(cfg.image_size, 7, 2, 3)
    return 2.0 * 7 * 7 * 3 * cfg.width * s * s


def forward_flops_per_sample(cfg: ResNetConfig | str) -> float:
    """Forward FLOPs for one image of `cfg.image_size` px.

    Convention: convolutions and the Linear head only, one multiply-add = 2 FLOPs; BatchNorm,
    ReLU, pooling and residual additions are left out (under 1% for ResNet-50, and
    FlopCounterMode skips them too). ResNet-50 at 224 px: 8.18e9 (torchvision: 4.09 GMACs).
    """
    cfg = _config(cfg)

    def conv(cin: int, cout: int, k: int, hw_out: int) -> float:
        return 2.0 * k * k * cin * cout * hw_out * hw_out

    flops = _stem_flops(cfg)
    s = _conv_out(_conv_out(cfg.image_size, 7, 2, 3), 3, 2, 1)  # stem conv, max pool
    in_ch = cfg.width
    for stage, blocks in enumerate(cfg.layers):
        width = cfg.width * 2**stage
        out_ch = width * EXPANSION
        for block in range(blocks):
            stride = 2 if stage > 0 and block == 0 else 1
            s_out = _conv_out(s, 3, stride, 1)
            flops += conv(in_ch, width, 1, s)  # 1x1 reduce, at the input resolution
            flops += conv(width, width, 3, s_out)  # 3x3, strided (v1.5)
            flops += conv(width, out_ch, 1, s_out)  # 1x1 expand
            if stride != 1 or in_ch != out_ch:
                flops += conv(in_ch, out_ch, 1, s_out)  # projection shortcut
            in_ch, s = out_ch, s_out
    flops += 2.0 * in_ch * cfg.num_classes
    return flops


def train_flops_per_sample(cfg: ResNetConfig | str) -> float:
    """Training FLOPs per image: 3 x forward (backward = gradient wrt inputs + gradient wrt
    weights, each one forward's worth), less the stem conv's input gradient, which is never
    computed because the image needs no gradient (1% of the total for ResNet-50, 14% for the
    tiny preset). Same convention as `forward_flops_per_sample`. ResNet-50: 2.43e10."""
    cfg = _config(cfg)
    return 3.0 * forward_flops_per_sample(cfg) - _stem_flops(cfg)
