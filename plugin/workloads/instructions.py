"""Seeded synthetic instruction-tuning samples: a prompt and a response of random lengths, the
loss on the response tokens only (the usual supervised fine-tuning objective: the model is not
trained to reproduce the prompt).

Each sample is `seq_len + 1` tokens (inputs and shifted targets) and `labels`, the next-token
targets with IGNORE (-100, the PyTorch / Hugging Face convention) wherever no loss is taken:
prompt tokens and padding. Two layouts:

- padded: one prompt + response per sample, right-padded with PAD to the sequence length
  (causal attention means real tokens never see the padding);
- packed: prompt + response pairs concatenated until the sequence is full (no padding compute;
  attention crosses document boundaries -- the cheap packing without a block-diagonal mask,
  which changes no FLOP or memory figure).

Sample i depends only on (seed, i), as every synthetic data set here.
"""

from __future__ import annotations

import torch

from .synthetic import _Seeded

__all__ = ["IGNORE", "PAD", "SyntheticInstructions"]

IGNORE = -100  # target index cross_entropy skips
PAD = 0  # padding token id; real tokens are drawn from 1..vocab-1


class SyntheticInstructions(_Seeded):
    def __init__(self, n: int, seq_len: int, vocab_size: int, seed: int = 0, packed: bool = False):
        super().__init__(n, seed)
        self.seq_len, self.vocab, self.packed = seq_len, vocab_size, packed

    def _pair(self, g: torch.Generator, room: int) -> tuple[torch.Tensor, int]:
        """One prompt + response of at most `room` tokens; (tokens, prompt length)."""
        prompt = int(torch.randint(max(1, room // 8), max(2, room // 2), (), generator=g))
        response = int(torch.randint(max(1, room // 8), max(2, room - prompt + 1), (), generator=g))
        n = min(room, prompt + response)
        return torch.randint(1, self.vocab, (n,), generator=g), min(prompt, n - 1)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        g = self._generator(i)
        T = self.seq_len + 1
        tokens = torch.full((T,), PAD, dtype=torch.long)
        scored = torch.zeros(T, dtype=torch.bool)  # position j's token is a response token
        at = 0
        while at < T - 1:
            ids, prompt = self._pair(g, T - at)
            tokens[at : at + len(ids)] = ids
            scored[at + prompt : at + len(ids)] = True
            at += len(ids)
            if not self.packed:
                break
        labels = torch.where(scored[1:], tokens[1:], torch.full((T - 1,), IGNORE))  # (seq_len,)
        return {"tokens": tokens, "labels": labels}
