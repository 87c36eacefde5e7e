"""BERT-base encoder with a sequence-classification head, in plain PyTorch, one file.

Devlin et al. 2018, "BERT: Pre-training of Deep Bidirectional Transformers" (arXiv:1810.04805):
post-LN transformer encoder, exact (erf) GELU, learned absolute positions, token types, and a
tanh pooler over the [CLS] token. The head is the GLUE fine-tuning head (dropout + Linear), here
sized for MNLI (3 labels, sequences of 128 tokens). The full preset is bert-base-uncased:
the encoder with pooler (`.bert`) has 109,482,240 parameters; the head adds 768*3 + 3.

Attention runs through `F.scaled_dot_product_attention` with the padding mask as a boolean
mask (True = attend). Weights of Hugging Face's `BertModel` map one-to-one onto this module (see
`reference_models/hf_weights.py`), and the outputs match it in float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "BertConfig",
    "PRESETS",
    "BertModel",
    "BertForSequenceClassification",
    "build",
    "forward_flops_per_sample",
    "train_flops_per_sample",
]


@dataclass(frozen=True)
class BertConfig:
    # WordPiece vocabulary of bert-base-uncased
    vocab_size: int = 30522
    # encoder layers / model width / heads of BERT-base (paper, section 3: L=12, H=768, A=12)
    n_layer: int = 12
    n_embd: int = 768
    n_head: int = 12
    # feed-forward inner width, 4 x n_embd in the paper
    intermediate_size: int = 3072
    # learned position table size; the checkpoint has 512 rows even when fine-tuning at 128
    max_position_embeddings: int = 512
    # segment A / segment B (sentence pairs: MNLI premise + hypothesis)
    type_vocab_size: int = 2
    # tokens per training sequence: 128 is the usual GLUE/MNLI fine-tuning length
    seq_len: int = 128
    # MNLI: entailment / neutral / contradiction
    num_labels: int = 3
    # dropout on embeddings, attention probabilities, residual branches and the head (paper: 0.1)
    dropout: float = 0.1
    # LayerNorm epsilon of the released checkpoints (1e-12, not PyTorch's 1e-5)
    layer_norm_eps: float = 1e-12
    # init std of weights (truncated normal in TF; plain normal here as in HF)
    initializer_range: float = 0.02

    def __post_init__(self) -> None:
        if self.n_embd % self.n_head:
            raise ValueError(
                f"BertConfig: n_embd={self.n_embd} is not a multiple of n_head={self.n_head}"
            )
        if self.seq_len > self.max_position_embeddings:
            raise ValueError(
                f"BertConfig: seq_len={self.seq_len} exceeds max_position_embeddings="
                f"{self.max_position_embeddings}"
            )


PRESETS: dict[str, BertConfig] = {
    # same code paths (embeddings, post-LN layers, padding mask, pooler, head) at ~0.1 M params
    "tiny": BertConfig(
        vocab_size=1000, n_layer=2, n_embd=64, n_head=2, intermediate_size=256,
        max_position_embeddings=64, seq_len=32,
    ),
    "full": BertConfig(),
    # SQuAD fine-tuning length (NVIDIA DeepLearningExamples default, the configuration published
    # training throughput tables use): lets projections be checked against them
    "seq384": BertConfig(seq_len=384),
}


class SelfAttention(nn.Module):
    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.query = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.key = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.value = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.dropout = cfg.dropout

    def forward(self, x: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        B, T, C = x.shape
        # (B, T, C) -> (B, nh, T, hs)
        q, k, v = (
            lin(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            for lin in (self.query, self.key, self.value)
        )
        p = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=p)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Layer(nn.Module):
    """Post-LN: x = LN(x + drop(attn(x))); x = LN(x + drop(ffn(x)))."""

    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.attn = SelfAttention(cfg)
        self.ln_attn = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.fc_in = nn.Linear(cfg.n_embd, cfg.intermediate_size)
        self.fc_out = nn.Linear(cfg.intermediate_size, cfg.n_embd)
        self.ln_ffn = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        x = self.ln_attn(x + self.drop(self.attn(x, bias)))
        h = self.fc_out(F.gelu(self.fc_in(x)))  # exact erf GELU, as in the checkpoint
        return self.ln_ffn(x + self.drop(h))


class BertModel(nn.Module):
    """Embeddings + encoder + pooler. Returns (sequence output (B, T, C), pooled (B, C))."""

    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.word_emb = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.pos_emb = nn.Embedding(cfg.max_position_embeddings, cfg.n_embd)
        self.type_emb = nn.Embedding(cfg.type_vocab_size, cfg.n_embd)
        self.ln_emb = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_eps)
        self.drop = nn.Dropout(cfg.dropout)
        self.layers = nn.ModuleList(Layer(cfg) for _ in range(cfg.n_layer))
        self.pooler = nn.Linear(cfg.n_embd, cfg.n_embd)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        B, T = input_ids.shape
        if T > self.cfg.max_position_embeddings:
            raise ValueError(
                f"sequence of {T} tokens is longer than max_position_embeddings="
                f"{self.cfg.max_position_embeddings}; use a shorter seq_len"
            )
        pos = torch.arange(T, device=input_ids.device)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        x = self.word_emb(input_ids) + self.pos_emb(pos) + self.type_emb(token_type_ids)
        x = self.drop(self.ln_emb(x))  # (B, T, C)
        bias = None
        if attention_mask is not None:
            # (B, T) 1 = token, 0 = padding -> boolean mask (B, 1, 1, T), True = attend. A
            # boolean mask keeps SDPA's memory-efficient kernel; an additive float bias forces
            # the math path (and flash attention takes no mask at all)
            bias = attention_mask[:, None, None, :].bool()
        for layer in self.layers:
            x = layer(x, bias)
        pooled = torch.tanh(self.pooler(x[:, 0]))  # [CLS] token -> (B, C)
        return x, pooled


class BertForSequenceClassification(nn.Module):
    def __init__(self, cfg: BertConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.bert = BertModel(cfg)
        self.drop = nn.Dropout(cfg.dropout)
        self.classifier = nn.Linear(cfg.n_embd, cfg.num_labels)
        self.apply(self._init_weights)

    def _init_weights(self, m: nn.Module) -> None:
        # BERT's init: N(0, 0.02) for Linear and Embedding weights, zero biases, LN = (1, 0)
        std = self.cfg.initializer_range
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=std)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=std)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        # input_ids (B, T) int64 -> logits (B, num_labels)
        _, pooled = self.bert(input_ids, attention_mask, token_type_ids)
        return self.classifier(self.drop(pooled))


def _config(size_or_config: str | BertConfig) -> BertConfig:
    if isinstance(size_or_config, BertConfig):
        return size_or_config
    if size_or_config not in PRESETS:
        raise ValueError(f"unknown BERT size {size_or_config!r}; known sizes: {', '.join(PRESETS)}")
    return PRESETS[size_or_config]


def build(size_or_config: str | BertConfig = "full") -> BertForSequenceClassification:
    """A freshly initialised classifier for a PRESETS key or a BertConfig."""
    return BertForSequenceClassification(_config(size_or_config))


def forward_flops_per_sample(cfg: BertConfig | str) -> float:
    """Forward FLOPs for one sequence of `cfg.seq_len` tokens (no padding assumed).

    Convention: matrix multiplies only, one multiply-add = 2 FLOPs; the attention score
    (Q K^T) and value (P V) matmuls ARE counted (2 x 2 T^2 C per layer, all T x T entries);
    embeddings lookups, LayerNorm, softmax, GELU and dropout are not. The pooler and the head
    run on the [CLS] token only. bert-base at T=128: 2.23e10.
    """
    cfg = _config(cfg)
    T, C, F_ = cfg.seq_len, cfg.n_embd, cfg.intermediate_size
    per_layer = (
        2 * T * C * 3 * C  # Q, K, V projections
        + 2 * T * T * C  # scores Q K^T, all heads together
        + 2 * T * T * C  # probabilities x V
        + 2 * T * C * C  # output projection
        + 2 * 2 * T * C * F_  # feed-forward in and out
    )
    head = 2 * C * C + 2 * C * cfg.num_labels  # pooler + classifier on one token
    return float(cfg.n_layer * per_layer + head)


def train_flops_per_sample(cfg: BertConfig | str) -> float:
    """Training FLOPs per sequence = 3 x forward (backward ~ 2 x forward: grads wrt inputs and
    wrt weights). Same convention as `forward_flops_per_sample`."""
    return 3.0 * forward_flops_per_sample(cfg)
