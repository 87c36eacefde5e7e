"""Reference models in plain PyTorch, one self-contained file each (no downloads).

Every model module has the same small surface: a config dataclass, `PRESETS` ("tiny", "full"),
the model class, `build(size_or_config)`, `forward_flops_per_sample(cfg)` and
`train_flops_per_sample(cfg)`. `hf_weights` loads local Hugging Face-format checkpoints.
"""

from . import bert, gpt, hf_weights, resnet
from .bert import BertConfig, BertForSequenceClassification, BertModel
from .gpt import GPT, GPTConfig
from .hf_weights import config_from_hf, load_hf_weights
from .resnet import ResNet, ResNetConfig

__all__ = [
    "bert",
    "gpt",
    "hf_weights",
    "resnet",
    "BertConfig",
    "BertForSequenceClassification",
    "BertModel",
    "GPT",
    "GPTConfig",
    "ResNet",
    "ResNetConfig",
    "config_from_hf",
    "load_hf_weights",
]
