"""Training-time image preprocessing done in the loader workers: JPEG decode, random resized
crop and horizontal flip -- the CPU cost of a real ImageNet input pipeline (Goyal et al. 2017 /
torchvision reference recipe: crop scale (0.08, 1), aspect ratio (3/4, 4/3), bilinear).

The random draws depend only on (seed, epoch, sample index), never on which worker runs them or
in what order, so a resumed loader reproduces the uninterrupted one exactly.
"""

from __future__ import annotations

import io
import math
import random

import numpy as np
import torch
from PIL import Image

__all__ = ["sample_rng", "crop_box", "decode_augment"]

SCALE = (0.08, 1.0)  # fraction of the image area kept
RATIO = (3 / 4, 4 / 3)  # aspect ratio range of the crop


def sample_rng(seed: int, epoch: int, index: int) -> random.Random:
    return random.Random(f"{seed}/{epoch}/{index}")  # str seeds hash with SHA-512: stable


def crop_box(height: int, width: int, rng: random.Random) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of a random area/aspect crop; centre crop after 10 misses."""
    area = height * width
    log_lo, log_hi = math.log(RATIO[0]), math.log(RATIO[1])
    for _ in range(10):
        target = area * rng.uniform(*SCALE)
        aspect = math.exp(rng.uniform(log_lo, log_hi))
        w = round(math.sqrt(target * aspect))
        h = round(math.sqrt(target / aspect))
        if 0 < w <= width and 0 < h <= height:
            top = rng.randint(0, height - h)
            left = rng.randint(0, width - w)
            return left, top, left + w, top + h
    aspect = width / height
    if aspect < RATIO[0]:
        w, h = width, round(width / RATIO[0])
    elif aspect > RATIO[1]:
        h, w = height, round(height * RATIO[1])
    else:
        w, h = width, height
    top, left = (height - h) // 2, (width - w) // 2
    return left, top, left + w, top + h


def decode_augment(data: bytes, size: int, rng: random.Random | None) -> torch.Tensor:
    """JPEG bytes -> uint8 (3, size, size): decode, random resized crop, random flip.
    rng None: the whole image resized (evaluation-style, no randomness)."""
    with Image.open(io.BytesIO(data)) as img:
        img = img.convert("RGB")  # decodes
        box = crop_box(img.height, img.width, rng) if rng is not None else (0, 0, img.width, img.height)
        out = img.resize((size, size), Image.BILINEAR, box=box)  # crop + resize in one pass
    if rng is not None and rng.random() < 0.5:
        out = out.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    # HWC -> CHW in numpy: a torch permute+contiguous here would use intra-op threads, whose
    # wake-ups cost more than the copy (4x slower measured on a busy 2-core machine)
    return torch.from_numpy(np.ascontiguousarray(np.asarray(out).transpose(2, 0, 1)))  # (3, H, W)
