"""The reference workloads, built on `reference_models/`."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..models import bert, gpt, llama, resnet
from ..errors import InputError
from .spec import Workload
from .instructions import IGNORE, SyntheticInstructions
from .synthetic import SyntheticImages, SyntheticTextPairs, SyntheticTokenStream

# ImageNet normalization, applied on the device to uint8 batches; one copy per device, made
# once (a .to(device) per step would be two blocking host-to-device copies in the timed step)
_MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1) * 255
_STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1) * 255
_NORM: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}


def _norm(device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    if device not in _NORM:
        _NORM[device] = (_MEAN.to(device), _STD.to(device))
    return _NORM[device]


def _resnet_loss(model, batch):
    x = batch["image"].float()
    mean, std = _norm(x.device)
    x = (x - mean) / std  # (B, 3, H, W)
    return F.cross_entropy(model(x), batch["label"])


def _resnet_optimizer(params, size):
    # Goyal et al. 2017 recipe: SGD momentum 0.9, wd 1e-4 (lr 0.1 per 256 images)
    return torch.optim.SGD(params, lr=0.1 if size == "full" else 0.05, momentum=0.9, weight_decay=1e-4)


def _bert_loss(model, batch):
    logits = model(batch["input_ids"], attention_mask=batch["attention_mask"])  # (B, labels)
    return F.cross_entropy(logits, batch["label"])


def _bert_optimizer(params, size):
    # BERT fine-tuning (Devlin et al. 2019): AdamW 2e-5, wd 0.01; tiny models need a larger lr
    return torch.optim.AdamW(params, lr=2e-5 if size == "full" else 1e-3, weight_decay=0.01)


def _gpt_loss(model, batch):
    tokens = batch["tokens"]  # (B, T + 1)
    logits = model(tokens[:, :-1])  # (B, T, V)
    return F.cross_entropy(logits.flatten(0, 1).float(), tokens[:, 1:].flatten())


def _gpt_optimizer(params, size):
    # GPT-3 small / nanoGPT: AdamW 6e-4, betas (0.9, 0.95), wd 0.1
    return torch.optim.AdamW(params, lr=6e-4 if size == "full" else 3e-3, betas=(0.9, 0.95), weight_decay=0.1)


def _sft_loss(model, batch):
    # mean next-token loss over the response tokens of the micro-batch (prompt, padding ignored)
    logits = model(batch["tokens"][:, :-1])  # (B, T, V)
    return F.cross_entropy(logits.flatten(0, 1).float(), batch["labels"].flatten(), ignore_index=IGNORE)


def _sft_items(batch):
    return (batch["labels"] != IGNORE).sum()  # response tokens the loss averages over


def _llama_optimizer(params, size):
    # torchtune's Llama-3.2-1B full fine-tune: AdamW 2e-5, wd 0.01; the tiny model needs more.
    # (LoRA recipes use ~3e-4; one optimizer per workload keeps the modes comparable.)
    return torch.optim.AdamW(params, lr=2e-5 if size == "full" else 1e-3, weight_decay=0.01)


def _load_hf(model, path):
    from ..models.hf_weights import load_hf_weights

    try:
        load_hf_weights(model, path)
    except (ValueError, OSError) as exc:
        raise InputError(f"--weights={path}: {exc}") from None


def _cfg(module, size):
    try:
        return module.PRESETS[size]
    except KeyError:
        raise InputError(f"unknown --size={size}; known: {', '.join(module.PRESETS)}") from None


# Registered by the workload registry on first use (this module registers nothing itself).
BUILTIN_WORKLOADS: tuple[Workload, ...] = (
    Workload(
        name="resnet50",
        model=lambda size: resnet.build(_cfg(resnet, size)),
        dataset=lambda size, n, seed: SyntheticImages(
            n, _cfg(resnet, size).image_size, _cfg(resnet, size).num_classes, seed
        ),
        loss=_resnet_loss,
        optimizer=_resnet_optimizer,
        flops_per_sample=lambda size: resnet.train_flops_per_sample(_cfg(resnet, size)),
        epoch_samples=1_281_167,
        epoch_source="ImageNet-1k train: 1,281,167 images",
        batch_size={"tiny": 16, "full": 128},
        description="ResNet-50 v1.5 image classification, SGD + momentum",
    ),
    Workload(
        name="bert-base",
        model=lambda size: bert.build(_cfg(bert, size)),
        dataset=lambda size, n, seed: SyntheticTextPairs(
            n, _cfg(bert, size).seq_len, _cfg(bert, size).vocab_size, _cfg(bert, size).num_labels, seed
        ),
        loss=_bert_loss,
        optimizer=_bert_optimizer,
        flops_per_sample=lambda size: bert.train_flops_per_sample(_cfg(bert, size)),
        epoch_samples=392_702,
        epoch_source="MNLI train: 392,702 sentence pairs",
        batch_size={"tiny": 16, "full": 32},
        tokens_per_sample=lambda size: _cfg(bert, size).seq_len,
        description="BERT-base encoder + classification head fine-tuning, AdamW",
        load_weights=_load_hf,
    ),
    Workload(
        name="gpt-small",
        model=lambda size: gpt.build(_cfg(gpt, size)),
        dataset=lambda size, n, seed: SyntheticTokenStream(n, _cfg(gpt, size).block_size, _cfg(gpt, size).vocab_size, seed),
        loss=_gpt_loss,
        optimizer=_gpt_optimizer,
        flops_per_sample=lambda size: gpt.train_flops_per_sample(_cfg(gpt, size)),
        epoch_samples=976_563,  # a 1e9-token budget in 1024-token windows
        epoch_source="token budget: 1e9 tokens / 1024-token windows",
        batch_size={"tiny": 8, "full": 8},
        tokens_per_sample=lambda size: _cfg(gpt, size).block_size,
        description="GPT-2 small (124M) language modelling, AdamW",
        load_weights=_load_hf,
    ),
    Workload(
        name="llama-1b",
        model=lambda size: llama.build(_cfg(llama, size)),
        dataset=lambda size, n, seed: SyntheticInstructions(
            n, _cfg(llama, size).seq_len, _cfg(llama, size).vocab_size, seed, packed=False
        ),
        loss=_sft_loss,
        optimizer=_llama_optimizer,
        flops_per_sample=lambda size: llama.train_flops_per_sample(_cfg(llama, size)),
        epoch_samples=52_002,  # Alpaca's instruction set, the usual fine-tuning quick start
        epoch_source="instruction fine-tuning set: 52,002 samples (Alpaca size), padded to seq_len",
        batch_size={"tiny": 8, "full": 1},  # full: 7 GB of fp32 activations per 2048-token sample; accumulate
        tokens_per_sample=lambda size: _cfg(llama, size).seq_len,
        description="Llama-3.2-1B instruction fine-tuning (full or LoRA), loss on response tokens, AdamW",
        load_weights=_load_hf,
        loss_items=_sft_items,
        # every linear layer of attention and MLP (QLoRA, Dettmers et al. 2023: all layers matter)
        lora_targets=("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
    ),
)
