"""Sample fields <-> files in a shard (the webdataset layout: `{key}.{field}.{ext}` members).

A workload's synthetic sample is a dict of tensors. Each field is stored the way a real data
set stores it:
- uint8 (3, H, W) -> `.jpg`: a real JPEG at a realistic stored resolution (decoding it and
  cropping it back to H x W is the CPU work of a real image pipeline);
- 0-d integer -> `.cls`: the class index as ASCII digits (webdataset convention);
- any other tensor -> `.npy`, integers narrowed to the smallest dtype that holds them
  (token ids in uint16/int32, as nanoGPT and Megatron store them), widened back on decode.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image

__all__ = ["FieldSpec", "field_specs", "encode_field", "decode_array", "decode_cls", "stored_image_hw",
           "render_jpeg"]

# ImageNet-1k train: ~140 GB of JPEGs for 1,281,167 images, ~110 KB each, typically 500 x 375
# px; the rendering below gives ~113 KB at that size (quality 90), see render_jpeg.
_IMAGENET_HW = (375, 500)
_IMAGENET_CROP = 224
_JPEG_QUALITY = 90


@dataclass(frozen=True)
class FieldSpec:
    name: str  # key in the batch dict, e.g. "image"
    ext: str  # "jpg", "cls" or "npy"
    dtype: str  # torch dtype of the decoded field, e.g. "uint8", "int64"
    shape: tuple[int, ...]  # decoded shape per sample, e.g. (3, 224, 224)

    def member(self, key: str) -> str:
        return f"{key}.{self.name}.{self.ext}"


def field_specs(sample: dict[str, torch.Tensor]) -> list[FieldSpec]:
    """How each field of `sample` is stored, from its dtype and shape."""
    specs = []
    for name, value in sample.items():
        t = torch.as_tensor(value)
        dtype = str(t.dtype).removeprefix("torch.")
        if t.dtype == torch.uint8 and t.ndim == 3 and t.shape[0] == 3:
            ext = "jpg"
        elif t.ndim == 0 and not t.is_floating_point():
            ext = "cls"
        else:
            ext = "npy"
        specs.append(FieldSpec(name, ext, dtype, tuple(t.shape)))
    return specs


def stored_image_hw(crop: int) -> tuple[int, int]:
    """Stored (H, W) for images cropped to `crop` px: ImageNet's 500 x 375 scaled with the crop."""
    s = crop / _IMAGENET_CROP
    return max(crop, round(_IMAGENET_HW[0] * s)), max(crop, round(_IMAGENET_HW[1] * s))


def render_jpeg(crop: int, seed: int, index: int) -> bytes:
    """A JPEG whose size and decode cost resemble a photo: smooth low-frequency colour (bicubic
    upsampled 1/4-resolution noise) plus +-16 levels of pixel noise for texture."""
    h, w = stored_image_hw(crop)
    rng = np.random.default_rng([seed, index, 0x1A6E])
    low = rng.integers(0, 256, (max(2, h // 4), max(2, w // 4), 3), dtype=np.uint8)
    base = np.asarray(Image.fromarray(low).resize((w, h), Image.BICUBIC), dtype=np.int16)
    pixels = np.clip(base + rng.integers(-16, 17, (h, w, 3)), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "JPEG", quality=_JPEG_QUALITY)
    return out.getvalue()


def _narrow(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu" and a.size:
        lo, hi = int(a.min()), int(a.max())
        for dt in (np.uint8, np.uint16, np.int32):
            info = np.iinfo(dt)
            if info.min <= lo and hi <= info.max:
                return a.astype(dt)
    return a


def encode_field(spec: FieldSpec, value: torch.Tensor, seed: int, index: int) -> bytes:
    if spec.ext == "jpg":
        return render_jpeg(spec.shape[-1], seed, index)
    if spec.ext == "cls":
        return str(int(value)).encode()
    out = io.BytesIO()
    np.save(out, _narrow(torch.as_tensor(value).numpy()), allow_pickle=False)
    return out.getvalue()


def decode_cls(data: bytes) -> torch.Tensor:
    return torch.tensor(int(data.decode("ascii").strip()))


def decode_array(data: bytes, dtype: str) -> torch.Tensor:
    a = np.load(io.BytesIO(data), allow_pickle=False)
    return torch.from_numpy(a).to(getattr(torch, dtype))
