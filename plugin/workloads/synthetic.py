"""Seeded synthetic data sets of the right shape and type. Sample i depends only on (seed, i),
so any worker, any process and any resume point sees exactly the same sample."""

from __future__ import annotations

import torch
from torch.utils.data import Dataset

__all__ = ["SyntheticImages", "SyntheticTextPairs", "SyntheticTokenStream"]


class _Seeded(Dataset):
    """n samples; sample i is drawn from a generator seeded by (seed, i) alone."""

    def __init__(self, n: int, seed: int):
        self.n, self.seed = n, seed

    def __len__(self) -> int:
        return self.n

    def _generator(self, i: int) -> torch.Generator:
        if not 0 <= i < self.n:
            raise IndexError(i)
        g = torch.Generator()
        g.manual_seed((self.seed * 1_000_003 + i) & 0x7FFF_FFFF_FFFF_FFFF)
        return g


class SyntheticImages(_Seeded):
    """uint8 images (3, H, W) -- the decode output of a JPEG pipeline -- and class labels."""

    def __init__(self, n: int, image_size: int, num_classes: int, seed: int = 0):
        super().__init__(n, seed)
        self.image_size, self.num_classes = image_size, num_classes

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        g = self._generator(i)
        s = self.image_size
        return {
            "image": torch.randint(0, 256, (3, s, s), generator=g, dtype=torch.uint8),
            "label": torch.randint(0, self.num_classes, (), generator=g),
        }


class SyntheticTextPairs(_Seeded):
    """Token ids with padding (an MNLI-like sentence pair of variable length) and a label."""

    def __init__(self, n: int, seq_len: int, vocab_size: int, num_labels: int, seed: int = 0):
        super().__init__(n, seed)
        self.seq_len, self.vocab, self.num_labels = seq_len, vocab_size, num_labels

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        g = self._generator(i)
        length = int(torch.randint(self.seq_len // 2, self.seq_len + 1, (), generator=g))
        ids = torch.zeros(self.seq_len, dtype=torch.long)  # 0 = [PAD]
        ids[:length] = torch.randint(1, self.vocab, (length,), generator=g)
        mask = torch.zeros(self.seq_len, dtype=torch.long)
        mask[:length] = 1
        return {"input_ids": ids, "attention_mask": mask, "label": torch.randint(0, self.num_labels, (), generator=g)}


class SyntheticTokenStream(_Seeded):
    """Windows of block_size + 1 tokens (inputs and shifted targets) from a seeded stream."""

    def __init__(self, n: int, block_size: int, vocab_size: int, seed: int = 0):
        super().__init__(n, seed)
        self.block_size, self.vocab = block_size, vocab_size

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        g = self._generator(i)
        return {"tokens": torch.randint(0, self.vocab, (self.block_size + 1,), generator=g)}
