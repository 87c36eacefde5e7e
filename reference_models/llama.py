"""Llama-3.2-1B in plain PyTorch, one file.

Llama 3 (Grattafiori et al. 2024, "The Llama 3 Herd of Models"): decoder-only, pre-norm
RMSNorm (Zhang & Sennrich 2019), rotary position embeddings (Su et al. 2021) with the Llama-3
frequency scaling for long context, grouped-query attention (Ainslie et al. 2023: 32 query heads
share 8 key/value heads) through `F.scaled_dot_product_attention(is_causal=True,
enable_gqa=True)`, SwiGLU MLP (Shazeer 2020), no biases, and the token embedding shared with the
output layer (Llama-3.2-1B ties them). The full preset is the released configuration: exactly
1,235,814,400 parameters.

Module names follow Hugging Face's `LlamaForCausalLM` minus its `model.` prefix
(`layers.3.self_attn.q_proj`, ...), so its weights map by renaming alone
(`reference_models/hf_weights.py`), peft's usual LoRA targets (`q_proj`, `v_proj`, ...) name the
same layers, and the logits match transformers in float64. Rotary embeddings use the same
half-split (`rotate_half`) layout as that checkpoint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "LlamaConfig",
    "PRESETS",
    "Llama",
    "build",
    "rope_inv_freq",
    "forward_flops_per_sample",
    "train_flops_per_sample",
]


@dataclass(frozen=True)
class LlamaConfig:
    # tokens per training sample (prompt + response, packed or padded); 2048 is torchtune's
    # usual fine-tuning length; the checkpoint itself allows 131,072
    seq_len: int = 2048
    # Llama-3 tiktoken vocabulary: 128,000 BPE tokens + 256 special tokens
    vocab_size: int = 128_256
    # Llama-3.2-1B: 16 layers, width 2048, 32 query heads / 8 KV heads (GQA), FFN 8192
    n_layer: int = 16
    n_embd: int = 2048
    n_head: int = 32
    n_kv_head: int = 8
    ffn_dim: int = 8192
    # RMSNorm epsilon of the released checkpoint
    norm_eps: float = 1e-5
    # RoPE base (Llama 3 raised it from 10,000 to 500,000 for long context)
    rope_theta: float = 500_000.0
    # Llama-3 frequency scaling (HF rope_type "llama3"); factor 1.0 disables it
    rope_factor: float = 32.0
    rope_low_freq_factor: float = 1.0
    rope_high_freq_factor: float = 4.0
    rope_original_max_pos: int = 8192
    # std of the normal init (HF initializer_range); fine-tuning replaces it with --weights
    init_std: float = 0.02

    def __post_init__(self) -> None:
        if self.n_embd % self.n_head or self.n_head % self.n_kv_head:
            raise ValueError(
                f"LlamaConfig: n_embd={self.n_embd} must divide by n_head={self.n_head}, "
                f"and n_head by n_kv_head={self.n_kv_head}"
            )

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head


PRESETS: dict[str, LlamaConfig] = {
    # same code paths (GQA 4/2 heads, Llama-3 RoPE scaling, SwiGLU, tied embeddings) at ~0.2 M
    # params; original_max_pos 64 puts the tiny model's frequencies in all three scaling bands
    "tiny": LlamaConfig(seq_len=64, vocab_size=512, n_layer=2, n_embd=64, n_head=4, n_kv_head=2,
                        ffn_dim=176, rope_original_max_pos=64),
    "full": LlamaConfig(),
}


def rope_inv_freq(cfg: LlamaConfig) -> torch.Tensor:
    """Inverse frequencies (head_dim / 2,) with the Llama-3 scaling: wavelengths longer than
    original_max_pos / low_freq_factor are divided by `rope_factor`, shorter than
    original_max_pos / high_freq_factor kept, and the band between interpolated smoothly."""
    d = cfg.head_dim
    # float32 throughout, as the checkpoint's reference code computes it (bitwise the same table)
    inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    if cfg.rope_factor == 1.0:
        return inv
    wavelen = 2 * math.pi / inv
    low_wl = cfg.rope_original_max_pos / cfg.rope_low_freq_factor
    high_wl = cfg.rope_original_max_pos / cfg.rope_high_freq_factor
    scaled = torch.where(wavelen > low_wl, inv / cfg.rope_factor, inv)
    smooth = (cfg.rope_original_max_pos / wavelen - cfg.rope_low_freq_factor) / (
        cfg.rope_high_freq_factor - cfg.rope_low_freq_factor
    )
    middle = (wavelen >= high_wl) & (wavelen <= low_wl)
    blended = (1 - smooth) * scaled / cfg.rope_factor + smooth * scaled
    return torch.where(middle, blended, scaled)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # normalised in fp32 at least, as the checkpoint was trained
        h = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.n_head, self.n_kv, self.hd = cfg.n_head, cfg.n_kv_head, cfg.head_dim
        self.q_proj = nn.Linear(cfg.n_embd, cfg.n_head * self.hd, bias=False)
        self.k_proj = nn.Linear(cfg.n_embd, cfg.n_kv_head * self.hd, bias=False)
        self.v_proj = nn.Linear(cfg.n_embd, cfg.n_kv_head * self.hd, bias=False)
        self.o_proj = nn.Linear(cfg.n_head * self.hd, cfg.n_embd, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        # (B, T, heads * hd) -> (B, heads, T, hd)
        q = self.q_proj(x).view(B, T, self.n_head, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv, self.hd).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin  # cos, sin: (T, hd), broadcast over B and heads
        k = k * cos + _rotate_half(k) * sin
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.n_kv != self.n_head)
        return self.o_proj(y.transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.n_embd, cfg.ffn_dim, bias=False)
        self.up_proj = nn.Linear(cfg.n_embd, cfg.ffn_dim, bias=False)
        self.down_proj = nn.Linear(cfg.ffn_dim, cfg.n_embd, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    """Pre-norm: x = x + attn(norm(x)); x = x + mlp(norm(x))."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.embed_tokens.weight  # tied (Llama-3.2-1B), counted once
        # derived from the config, not learned: not saved (HF does the same)
        self.register_buffer("inv_freq", rope_inv_freq(cfg), persistent=False)
        for name, p in self.named_parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=cfg.init_std)  # Linear weights and the tied embedding

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        # idx (B, T) int64 token ids -> logits (B, T, vocab_size)
        T = idx.shape[1]
        if T > self.cfg.seq_len:
            raise ValueError(f"sequence of {T} tokens is longer than seq_len={self.cfg.seq_len}")
        # angles in float32 whatever the model dtype (bf16 positions would be too coarse)
        pos = torch.arange(T, device=idx.device, dtype=torch.float32)
        freqs = torch.outer(pos, self.inv_freq.float())  # (T, hd / 2)
        emb = torch.cat((freqs, freqs), dim=-1)  # (T, hd): half-split layout
        x = self.embed_tokens(idx)  # (B, T, C)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        for block in self.layers:
            x = block(x, cos, sin)
        return self.lm_head(self.norm(x))


def _config(size_or_config: str | LlamaConfig) -> LlamaConfig:
    if isinstance(size_or_config, LlamaConfig):
        return size_or_config
    if size_or_config not in PRESETS:
        raise ValueError(f"unknown Llama size {size_or_config!r}; known sizes: {', '.join(PRESETS)}")
    return PRESETS[size_or_config]


def build(size_or_config: str | LlamaConfig = "full") -> Llama:
    """A freshly initialised model for a PRESETS key or a LlamaConfig."""
    return Llama(_config(size_or_config))


def forward_flops_per_sample(cfg: LlamaConfig | str) -> float:
    """Forward FLOPs for one sample of `cfg.seq_len` tokens.

    Convention (as `gpt.forward_flops_per_sample`): matrix multiplies only, a multiply-add = 2
    FLOPs; the attention score (Q K^T) and value (P V) matmuls counted over the full T x T
    square as dense kernels and FlopCounterMode count them (causality would halve the useful
    part); GQA shares K/V projections but every query head still does its own score and value
    matmul; the tied LM head counted; embedding lookup, RMSNorm, RoPE, softmax and SiLU not.
    Every token is counted, padding and prompt included: the device computes them all.
    Llama-3.2-1B at 2048 tokens: 5.61e12.
    """
    cfg = _config(cfg)
    T, C, V, F_ = cfg.seq_len, cfg.n_embd, cfg.vocab_size, cfg.ffn_dim
    kv = cfg.n_kv_head * cfg.head_dim
    per_layer = (
        2 * T * C * C  # Q projection
        + 2 * 2 * T * C * kv  # K and V projections (n_kv_head heads)
        + 2 * T * T * C  # scores Q K^T (all query heads)
        + 2 * T * T * C  # probabilities x V
        + 2 * T * C * C  # output projection
        + 3 * 2 * T * C * F_  # SwiGLU gate, up, down
    )
    return float(cfg.n_layer * per_layer + 2 * T * C * V)  # + LM head


def train_flops_per_sample(cfg: LlamaConfig | str) -> float:
    """Training FLOPs per sample = 3 x forward (backward ~ 2 x forward), same convention. With
    LoRA the frozen weights need no weight gradient, which this count does not subtract: it is
    the full fine-tuning figure, as MFU reports conventionally use."""
    return 3.0 * forward_flops_per_sample(cfg)
