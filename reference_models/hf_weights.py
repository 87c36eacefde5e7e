"""Load local Hugging Face-format checkpoints (BERT, GPT-2, Llama) into the reference models.

A checkpoint is a directory as `save_pretrained` writes it (config.json + model.safetensors or
pytorch_model.bin, possibly sharded with an index file), a single weights file, or a state dict
already in memory. Nothing is ever downloaded and `transformers` is never imported: the
mapping below is plain key renaming, plus one transpose for GPT-2, whose `Conv1D` layers store
weights as (in, out) where `nn.Linear` uses (out, in).

Accepted key layouts: `BertModel`, `BertFor*` (prefix `bert.`; the pre-training heads `cls.*`
are ignored; a `classifier.*` head loads when its size matches), `GPT2Model`, `GPT2LMHeadModel`
(prefix `transformer.`; `lm_head.weight` must equal the tied `wte.weight`), and the old
TensorFlow-converted names `LayerNorm.gamma/beta`, and `LlamaModel`/`LlamaForCausalLM`
(prefix `model.`; our names are theirs; `lm_head.weight`, when saved, must equal the tied
`embed_tokens.weight`; `rotary_emb.inv_freq` buffers are derived, not loaded). Anything else raises ValueError naming the
source, the keys, and the fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Mapping, Union

import torch
from torch import nn

from . import bert, gpt, llama

__all__ = ["config_from_hf", "hf_to_reference", "load_hf_weights"]

StateDict = Mapping[str, torch.Tensor]
Source = Union[str, Path, StateDict]

# ---- name tables --------------------------------------------------------------------------------

_BERT_TOP = {
    "embeddings.word_embeddings": "word_emb",
    "embeddings.position_embeddings": "pos_emb",
    "embeddings.token_type_embeddings": "type_emb",
    "embeddings.LayerNorm": "ln_emb",
    "pooler.dense": "pooler",
}
_BERT_LAYER = {  # inside encoder.layer.{i}. -> layers.{i}.
    "attention.self.query": "attn.query",
    "attention.self.key": "attn.key",
    "attention.self.value": "attn.value",
    "attention.output.dense": "attn.proj",
    "attention.output.LayerNorm": "ln_attn",
    "intermediate.dense": "fc_in",
    "output.dense": "fc_out",
    "output.LayerNorm": "ln_ffn",
}
_BERT_LAYER_RE = re.compile(r"encoder\.layer\.(\d+)\.(.+)$")
# buffers and heads a BERT checkpoint may carry that this model has no place for
_BERT_IGNORED = re.compile(r"^(cls\.|embeddings\.position_ids$)")
# GPT-2 names are ours already (nanoGPT kept them); Conv1D weights are (in, out)
_GPT_CONV1D = re.compile(r"\.(c_attn|c_proj|c_fc)\.weight$")
# causal-mask buffers of older GPT-2 checkpoints
_GPT_IGNORED = re.compile(r"\.attn\.(bias|masked_bias)$")

# rotary tables some Llama checkpoints carry: derived from the config, never loaded
_LLAMA_IGNORED = re.compile(r"rotary_emb\.inv_freq$")

# (n_layer, n_embd) of released checkpoints, only to name what a mismatching checkpoint is
_KNOWN = {
    "bert": {(12, 768): "BERT-base", (24, 1024): "BERT-large", (4, 256): "BERT-mini"},
    "gpt": {(12, 768): "GPT-2 small", (24, 1024): "GPT-2 medium", (36, 1280): "GPT-2 large",
            (48, 1600): "GPT-2 XL"},
    "llama": {(16, 2048): "Llama-3.2-1B", (28, 3072): "Llama-3.2-3B", (32, 4096): "Llama-3.1-8B"},
}
# the tied embedding of each family: its name in our model and what labels an error
_EMBEDDING = {"bert": "word_emb.weight", "gpt": "wte.weight", "llama": "embed_tokens.weight"}
_LABEL = {"bert": "BERT", "gpt": "GPT", "llama": "Llama"}


def _family(model: nn.Module) -> str:
    if isinstance(model, (bert.BertForSequenceClassification, bert.BertModel)):
        return "bert"
    if isinstance(model, gpt.GPT):
        return "gpt"
    if isinstance(model, llama.Llama):
        return "llama"
    raise ValueError(
        f"load_hf_weights: no Hugging Face mapping for {type(model).__name__}; "
        "supported models: BertForSequenceClassification, BertModel, GPT, Llama"
    )


def _checkpoint_family(sd: StateDict) -> str | None:
    keys = set(sd)
    if any(k.endswith("word_embeddings.weight") for k in keys):
        return "bert"
    if any(k.endswith("wte.weight") for k in keys):
        return "gpt"
    if any(k.endswith("embed_tokens.weight") for k in keys):
        return "llama"
    return None


def _tied_head(sd: StateDict, t: torch.Tensor, embedding: str, what: str) -> None:
    """A saved lm_head.weight is accepted only when it equals the tied input embedding."""
    emb = next((v for k, v in sd.items() if k.endswith(embedding)), None)
    if emb is not None and not (emb.shape == t.shape and torch.equal(emb, t)):
        raise ValueError(
            f"lm_head.weight differs from {embedding}: this checkpoint has untied "
            f"output embeddings, which the reference {what} (tied) cannot hold"
        )


def hf_to_reference(sd: StateDict, family: str) -> tuple[dict[str, torch.Tensor], list[str]]:
    """Rename a Hugging Face state dict to reference-model names (encoder names for BERT, i.e.
    relative to `BertForSequenceClassification.bert`, plus `classifier.*` when present).

    Returns (mapped tensors, HF keys that were not mapped). GPT-2 Conv1D weights come back
    transposed to (out, in); `lm_head.weight` is dropped after checking it is tied to wte.
    """
    out: dict[str, torch.Tensor] = {}
    unmapped: list[str] = []
    for key, t in sd.items():
        if family == "bert":
            k = key.removeprefix("bert.").replace("LayerNorm.gamma", "LayerNorm.weight")
            k = k.replace("LayerNorm.beta", "LayerNorm.bias")
            if _BERT_IGNORED.search(k):
                continue
            stem, _, leaf = k.rpartition(".")
            if k.startswith("classifier."):
                out[k] = t
            elif stem in _BERT_TOP:
                out[f"{_BERT_TOP[stem]}.{leaf}"] = t
            elif (m := _BERT_LAYER_RE.match(stem)) and m.group(2) in _BERT_LAYER:
                out[f"layers.{m.group(1)}.{_BERT_LAYER[m.group(2)]}.{leaf}"] = t
            else:
                unmapped.append(key)
        elif family == "llama":
            k = key.removeprefix("model.")
            if _LLAMA_IGNORED.search(k):
                continue
            if k == "lm_head.weight":
                _tied_head(sd, t, "embed_tokens.weight", "Llama (as Llama-3.2-1B)")
                continue
            out[k] = t
        else:
            k = key.removeprefix("transformer.")
            if _GPT_IGNORED.search(k):
                continue
            if k == "lm_head.weight":
                _tied_head(sd, t, "wte.weight", "GPT (as GPT-2)")
                continue
            out[k] = t.t() if _GPT_CONV1D.search(k) and t.dim() == 2 else t
    return out, unmapped


def _hf_name(ours: str, family: str) -> str:
    """The Hugging Face name of one of our keys, for error messages ('name (ours: x)')."""
    if family == "llama":
        return f"model.{ours}"
    if family == "gpt" or ours.startswith("classifier."):
        return ours
    stem, _, leaf = ours.rpartition(".")
    if m := re.match(r"layers\.(\d+)\.(.+)$", stem):
        inverse = {v: k for k, v in _BERT_LAYER.items()}
        hf = f"encoder.layer.{m.group(1)}.{inverse.get(m.group(2), m.group(2))}.{leaf}"
    else:
        hf = f"{ {v: k for k, v in _BERT_TOP.items()}.get(stem, stem)}.{leaf}"
    return f"{hf} (ours: {ours})"


def _describe(sd: Mapping[str, torch.Tensor], family: str) -> str:
    """'n_layer=24, n_embd=1024, vocab=30522 (BERT-large)' from our names, or ''."""
    emb = sd.get(_EMBEDDING[family])
    if emb is None or emb.dim() != 2:
        return ""
    layer_key = "h" if family == "gpt" else "layers"
    ids = {int(k.split(".")[1]) for k in sd if k.startswith(layer_key + ".")}
    n_layer, (vocab, n_embd) = len(ids), tuple(emb.shape)
    name = _KNOWN[family].get((n_layer, n_embd))
    return f"n_layer={n_layer}, n_embd={n_embd}, vocab={vocab}" + (f" ({name})" if name else "")


def _fix_hint(where: str) -> str:
    if where == "a state dict":
        return "build the model with the checkpoint's config (config_from_hf) or a matching size"
    return (f"pick the --size that matches the checkpoint, or build the model from its own "
            f"config.json with config_from_hf({where!r})")


def _check(target: dict[str, torch.Tensor], expected: Mapping[str, torch.Tensor],
           family: str, where: str, optional: set[str]) -> None:
    missing = sorted(set(expected) - set(target) - optional)
    unexpected = sorted(set(target) - set(expected))
    wrong = [(k, tuple(target[k].shape), tuple(expected[k].shape))
             for k in expected if k in target and target[k].shape != expected[k].shape]
    if not (missing or unexpected or wrong):
        return
    lines = [f"checkpoint {where} does not fit the {_LABEL[family]} model:"]
    if wrong:
        lines.append(f"  shape mismatch, checkpoint vs model ({len(wrong)}):")
        lines += [f"    {_hf_name(k, family)}: {a} vs {b}" for k, a, b in wrong[:4]]
        lines += ["    ..."] if len(wrong) > 4 else []
    for what, keys in (("missing from the checkpoint", missing), ("not in the model", unexpected)):
        if keys:
            lines.append(f"  {what} ({len(keys)}): "
                         + ", ".join(_hf_name(k, family) for k in keys[:3])
                         + (" ..." if len(keys) > 3 else ""))
    ckpt, model = _describe(target, family), _describe(expected, family)
    if ckpt and model and ckpt != model:
        lines.append(f"  the checkpoint is {ckpt}; the model is {model}")
    lines.append(f"  fix: {_fix_hint(where)}")
    raise ValueError("\n".join(lines))


def load_hf_weights(model: nn.Module, source: Source) -> list[str]:
    """Copy a Hugging Face BERT, GPT-2 or Llama checkpoint into `model` (in place, on its device and
    dtype). `source`: a save_pretrained directory, a .safetensors/.bin file, or a state dict.

    Returns the model's parameter names left at their initialization: the classification head
    when the checkpoint has none (fine-tuning from bert-base-uncased), else []. Raises
    ValueError on any other missing, unexpected or mis-shaped weight.
    """
    family = _family(model)
    where = "a state dict" if isinstance(source, Mapping) else str(source)
    sd = source if isinstance(source, Mapping) else _read_state_dict(Path(source))
    found = _checkpoint_family(sd)
    if found is not None and found != family:
        raise ValueError(
            f"checkpoint {where} is a {_LABEL[found]} checkpoint but the model is "
            f"{_LABEL[family]}: use the matching workload"
        )
    mapped, unmapped = hf_to_reference(sd, family)
    if unmapped:
        raise ValueError(
            f"checkpoint {where}: keys with no place in the reference {_LABEL[family]} model: "
            f"{', '.join(unmapped[:5])}{' ...' if len(unmapped) > 5 else ''}; expected a "
            + {"bert": "BertModel/BertForSequenceClassification", "gpt": "GPT2Model/GPT2LMHeadModel",
               "llama": "LlamaModel/LlamaForCausalLM"}[family] + " checkpoint"
        )
    encoder = model.bert if isinstance(model, bert.BertForSequenceClassification) else model
    expected = dict(encoder.state_dict())
    optional: set[str] = set()
    if family == "bert":
        head = {k: v for k, v in mapped.items() if k.startswith("classifier.")}
        mapped = {k: v for k, v in mapped.items() if k not in head}
        if isinstance(model, bert.BertForSequenceClassification):
            head_shapes = model.classifier.state_dict()
            expected.update({f"classifier.{k}": v for k, v in head_shapes.items()})
            optional = {k for k in expected if k.startswith("classifier.")}
            if head and head["classifier.weight"].shape != model.classifier.weight.shape:
                raise ValueError(
                    f"checkpoint {where} has a classifier for {head['classifier.weight'].shape[0]} "
                    f"labels; the model has {model.cfg.num_labels}: build it with num_labels="
                    f"{head['classifier.weight'].shape[0]} (config_from_hf does)"
                )
            mapped.update(head)
    else:
        expected.pop("lm_head.weight", None)  # tied to the input embedding: loads with it
    _check(mapped, expected, family, where, optional)
    with torch.no_grad():
        for name, tensor in mapped.items():
            target = model.classifier if name.startswith("classifier.") else encoder
            target.get_parameter(name.removeprefix("classifier.")).copy_(tensor)
    return sorted(optional - set(mapped))


# ---- reading files ------------------------------------------------------------------------------


def _read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    if not path.exists():
        raise ValueError(f"checkpoint {path} does not exist; give a local save_pretrained "
                         "directory or weights file (nothing is downloaded)")
    if path.is_file():
        files = [path]
    else:
        files = []
        for name in ("model.safetensors", "pytorch_model.bin"):
            index = path / f"{name}.index.json"
            if (path / name).is_file():
                files = [path / name]
            elif index.is_file():
                shards = sorted(set(json.loads(index.read_text())["weight_map"].values()))
                files = [path / s for s in shards]
            if files:
                break
        if not files:
            raise ValueError(f"checkpoint {path}: no model.safetensors or pytorch_model.bin "
                             "(nor a sharded index) in the directory")
    sd: dict[str, torch.Tensor] = {}
    for f in files:
        sd.update(_read_file(f))
    return sd


def _read_file(f: Path) -> dict[str, torch.Tensor]:
    if f.suffix == ".safetensors":
        try:
            from safetensors.torch import load_file
        except ImportError:
            raise ValueError(f"checkpoint {f} is a safetensors file and the 'safetensors' package "
                             "is not installed: pip install safetensors") from None
        return load_file(str(f))
    try:
        sd = torch.load(f, map_location="cpu", weights_only=True)  # never unpickle code
    except Exception as e:  # noqa: BLE001  (any unreadable file: say which and why)
        raise ValueError(
            f"checkpoint {f} could not be read as a weights-only PyTorch file: {e}"
        ) from None
    if not isinstance(sd, Mapping):
        raise ValueError(f"checkpoint {f} holds a {type(sd).__name__}, not a state dict")
    return dict(sd)


# ---- configs ------------------------------------------------------------------------------------


def config_from_hf(path: str | Path, **overrides) -> bert.BertConfig | gpt.GPTConfig | llama.LlamaConfig:
    """Our config from a checkpoint's config.json (model_type "bert" or "gpt2"), so a model of
    the checkpoint's shape can be built before loading it. `overrides` replace fields (e.g.
    seq_len=128, num_labels=3); a BERT checkpoint's num_labels is used only when it was saved
    by a sequence classifier, otherwise the MNLI default (3) stays."""
    p = Path(path)
    file = p / "config.json" if p.is_dir() else p
    if not file.is_file():
        raise ValueError(f"checkpoint {p}: no config.json to build the model from")
    try:
        c = json.loads(file.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{file} is not valid JSON: {e}") from None
    builders = {"bert": _bert_config, "gpt2": _gpt_config, "llama": _llama_config}
    kind = c.get("model_type")
    if kind not in builders:
        raise ValueError(f"{file}: model_type {kind!r} is not supported; expected 'bert', 'gpt2' or 'llama'")
    try:
        cfg = builders[kind](file, c)
    except KeyError as e:
        raise ValueError(f"{file}: no {e} entry, which a {kind} config.json has") from None
    return replace(cfg, **overrides) if overrides else cfg


def _bert_config(file: Path, c: dict) -> bert.BertConfig:
    _require(file, c, "hidden_act", ("gelu",))
    _require(file, c, "position_embedding_type", ("absolute", None))
    fields = dict(
        vocab_size=c["vocab_size"], n_layer=c["num_hidden_layers"], n_embd=c["hidden_size"],
        n_head=c["num_attention_heads"], intermediate_size=c["intermediate_size"],
        max_position_embeddings=c["max_position_embeddings"],
        type_vocab_size=c.get("type_vocab_size", 2),
        layer_norm_eps=c.get("layer_norm_eps", 1e-12),
        dropout=c.get("hidden_dropout_prob", 0.1),
        seq_len=min(bert.BertConfig.seq_len, c["max_position_embeddings"]),
    )
    # id2label of a base checkpoint is a meaningless default: trust it only from a classifier
    if any("SequenceClassification" in a for a in c.get("architectures") or []):
        fields["num_labels"] = len(c.get("id2label") or {}) or bert.BertConfig.num_labels
    return bert.BertConfig(**fields)


def _gpt_config(file: Path, c: dict) -> gpt.GPTConfig:
    _require(file, c, "activation_function", ("gelu_new", "gelu_pytorch_tanh"))
    _require(file, c, "scale_attn_weights", (True,))
    _require(file, c, "scale_attn_by_inverse_layer_idx", (False,))
    if c.get("n_inner") not in (None, 4 * c["n_embd"]):
        raise ValueError(f"{file}: n_inner={c['n_inner']} is not 4 x n_embd; the reference "
                         "GPT has a 4x MLP")
    return gpt.GPTConfig(
        block_size=c["n_positions"], vocab_size=c["vocab_size"], n_layer=c["n_layer"],
        n_head=c["n_head"], n_embd=c["n_embd"], dropout=c.get("resid_pdrop", 0.0),
        layer_norm_eps=c.get("layer_norm_epsilon", 1e-5),
    )


def _llama_config(file: Path, c: dict) -> llama.LlamaConfig:
    _require(file, c, "hidden_act", ("silu",))
    _require(file, c, "tie_word_embeddings", (True,))
    _require(file, c, "attention_bias", (False,))
    # transformers 5 nests RoPE settings in rope_parameters, 4.x in rope_theta + rope_scaling
    rope = dict(c.get("rope_scaling") or {}, **(c.get("rope_parameters") or {}))
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind not in ("llama3", "default"):
        raise ValueError(f"{file}: rope_type {kind!r} is not supported (the reference Llama implements "
                         "'llama3' and 'default')")
    scaled = kind == "llama3"
    n_head = c["num_attention_heads"]
    return llama.LlamaConfig(
        seq_len=min(llama.LlamaConfig.seq_len, c["max_position_embeddings"]), vocab_size=c["vocab_size"],
        n_layer=c["num_hidden_layers"], n_embd=c["hidden_size"], n_head=n_head,
        n_kv_head=c.get("num_key_value_heads") or n_head, ffn_dim=c["intermediate_size"],
        norm_eps=c.get("rms_norm_eps", 1e-5), rope_theta=rope.get("rope_theta", c.get("rope_theta", 10_000.0)),
        rope_factor=rope["factor"] if scaled else 1.0,
        rope_low_freq_factor=rope.get("low_freq_factor", 1.0) if scaled else 1.0,
        rope_high_freq_factor=rope.get("high_freq_factor", 4.0) if scaled else 4.0,
        rope_original_max_pos=rope.get("original_max_position_embeddings", 8192) if scaled else 8192,
    )


def _require(file: Path, c: dict, key: str, allowed: tuple) -> None:
    if c.get(key, allowed[0]) not in allowed:
        raise ValueError(f"{file}: {key}={c[key]!r} is not supported by the reference model "
                         f"(it implements {allowed[0]!r})")
