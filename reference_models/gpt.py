"""GPT-2 small in plain PyTorch, one file (after karpathy/nanoGPT model.py).

Radford et al. 2019, "Language Models are Unsupervised Multitask Learners": decoder-only,
pre-LN blocks, GELU (tanh approximation), biases everywhere, learned positions, and the token
embedding shared with the output layer. The full preset is the released 124M model: vocab
50257 (unpadded) with tied embeddings gives exactly 124,439,808 parameters. Attention is causal
`F.scaled_dot_product_attention(is_causal=True)` (flash / memory-efficient kernels on GPU).

Weights of Hugging Face's `GPT2LMHeadModel` map onto this module (their Conv1D weights are
stored transposed; see `reference_models/hf_weights.py`), and the logits match in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "GPTConfig",
    "PRESETS",
    "GPT",
    "build",
    "forward_flops_per_sample",
    "train_flops_per_sample",
]


@dataclass(frozen=True)
class GPTConfig:
    # context length of GPT-2; one training sample is one window of this many tokens
    block_size: int = 1024
    # GPT-2 BPE vocabulary, unpadded: the published 124,439,808 count needs exactly 50257
    # (nanoGPT pads to 50304 for speed; we keep the checkpoint's shape so HF weights load)
    vocab_size: int = 50257
    # GPT-2 small: 12 layers, 12 heads, width 768
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    # GPT-2 used 0.1; 0.0 is the usual choice for benchmarking and pre-training from scratch
    dropout: float = 0.0
    # LayerNorm epsilon of the released checkpoint (HF layer_norm_epsilon)
    layer_norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        if self.n_embd % self.n_head:
            raise ValueError(
                f"GPTConfig: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}"
            )

    @property
    def seq_len(self) -> int:
        """Tokens per sample (the same as block_size), for code that handles all text models."""
        return self.block_size


PRESETS: dict[str, GPTConfig] = {
    # same code paths (tied embeddings, causal SDPA, pre-LN, scaled init) at ~0.2 M params
    "tiny": GPTConfig(block_size=64, vocab_size=1000, n_layer=2, n_head=2, n_embd=64),
    "full": GPTConfig(),
}


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)  # q, k, v in one matmul
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.resid_drop = nn.Dropout(cfg.dropout)
        self.dropout = cfg.dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        # (B, T, C) -> (B, nh, T, hs)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.resid_drop(self.c_proj(y.transpose(1, 2).reshape(B, T, C)))


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # GPT-2's gelu is the tanh approximation (HF "gelu_new")
        return self.drop(self.c_proj(F.gelu(self.c_fc(x), approximate="tanh")))


class Block(nn.Module):
    """Pre-LN: x = x + attn(LN(x)); x = x + mlp(LN(x))."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying (Press & Wolf 2017), counted once
        self._init_weights()

    def _init_weights(self) -> None:
        # GPT-2 init: N(0, 0.02) weights, zero biases; the projections that write into the
        # residual stream get std 0.02 / sqrt(2 n_layer) (GPT-2 paper, section 2.3)
        for name, p in self.named_parameters():
            if p.dim() == 1:
                nn.init.zeros_(p) if name.endswith("bias") else nn.init.ones_(p)
            elif name.endswith("c_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * self.cfg.n_layer))
            else:
                nn.init.normal_(p, std=0.02)  # Linear weights, wte (= lm_head), wpe

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        # idx (B, T) int64 token ids -> logits (B, T, vocab_size)
        B, T = idx.shape
        if T > self.cfg.block_size:
            raise ValueError(
                f"sequence of {T} tokens is longer than block_size={self.cfg.block_size}"
            )
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))  # (B, T, C)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def _config(size_or_config: str | GPTConfig) -> GPTConfig:
    if isinstance(size_or_config, GPTConfig):
        return size_or_config
    if size_or_config not in PRESETS:
        raise ValueError(f"unknown GPT size {size_or_config!r}; known sizes: {', '.join(PRESETS)}")
    return PRESETS[size_or_config]


def build(size_or_config: str | GPTConfig = "full") -> GPT:
    """A freshly initialised model for a PRESETS key or a GPTConfig."""
    return GPT(_config(size_or_config))


def forward_flops_per_sample(cfg: GPTConfig | str) -> float:
    """Forward FLOPs for one sample = one window of `cfg.block_size` tokens.

    Convention: matrix multiplies only, one multiply-add = 2 FLOPs. The attention score
    (Q K^T) and value (P V) matmuls ARE counted over the full T x T square, as the dense kernels
    and FlopCounterMode count them (causality would halve the useful part). The LM head is
    counted (the tied weight is still one matmul per token); embedding lookups, LayerNorm,
    softmax and GELU are not. Per token, training (3 x this) is 6N + 12 L T C with N the matmul
    weights including the LM head: PaLM's count (Chowdhery et al. 2022, appendix B).
    GPT-2 small: 2.92e11 per 1024-token window.
    """
    cfg = _config(cfg)
    T, C, V = cfg.block_size, cfg.n_embd, cfg.vocab_size
    per_layer = (
        2 * T * C * 3 * C  # fused Q, K, V projection
        + 2 * T * T * C  # scores Q K^T (all heads)
        + 2 * T * T * C  # probabilities x V
        + 2 * T * C * C  # attention output projection
        + 2 * 2 * T * C * 4 * C  # MLP in and out
    )
    return float(cfg.n_layer * per_layer + 2 * T * C * V)  # + LM head


def train_flops_per_sample(cfg: GPTConfig | str) -> float:
    """Training FLOPs per window = 3 x forward (backward ~ 2 x forward). Same convention as
    `forward_flops_per_sample`; divided by block_size it is FLOPs per token."""
    return 3.0 * forward_flops_per_sample(cfg)
