"""Must-show 3: with the same weights, our BERT and GPT compute what `transformers` computes.

Small random Hugging Face models are built from configs in code (nothing is downloaded), their
weights go through `reference_models.hf_weights`, and outputs are compared in float64 in eval
mode. The same path through `save_pretrained` directories is what `--weights PATH` uses.
"""

from __future__ import annotations

import json

import pytest
import torch

from trainbench.models import bert, gpt
from trainbench.models.hf_weights import config_from_hf, load_hf_weights

transformers = pytest.importorskip("transformers")

F64 = dict(rtol=1e-10, atol=1e-10)


def _hf_bert_config(**kw):
    base = dict(vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=40, type_vocab_size=2)
    return transformers.BertConfig(**{**base, **kw})


def _hf_gpt_config(**kw):
    base = dict(vocab_size=120, n_positions=48, n_embd=32, n_layer=2, n_head=4,
                bos_token_id=0, eos_token_id=0)
    return transformers.GPT2Config(**{**base, **kw})


def _bert_inputs(vocab: int, T: int = 24):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (3, T), generator=g)
    mask = torch.ones_like(ids)
    mask[1, 15:] = 0  # a padded row
    mask[2, 5:] = 0
    types = torch.zeros_like(ids)
    types[:, 10:] = 1
    return ids, mask, types


def _ours_bert(hf_cfg, **kw) -> bert.BertForSequenceClassification:
    cfg = bert.BertConfig(
        vocab_size=hf_cfg.vocab_size, n_layer=hf_cfg.num_hidden_layers, n_embd=hf_cfg.hidden_size,
        n_head=hf_cfg.num_attention_heads, intermediate_size=hf_cfg.intermediate_size,
        max_position_embeddings=hf_cfg.max_position_embeddings, seq_len=24, **kw,
    )
    return bert.build(cfg)


def test_bert_encoder_matches_transformers_bertmodel_in_float64():
    torch.manual_seed(0)
    hf_cfg = _hf_bert_config()
    hf = transformers.BertModel(hf_cfg).double().eval()
    ours = _ours_bert(hf_cfg)
    assert load_hf_weights(ours, hf.state_dict()) == ["classifier.bias", "classifier.weight"]
    ours.double().eval()
    ids, mask, types = _bert_inputs(hf_cfg.vocab_size)
    with torch.no_grad():
        ref = hf(input_ids=ids, attention_mask=mask, token_type_ids=types)
        seq, pooled = ours.bert(ids, mask, types)
    torch.testing.assert_close(seq, ref.last_hidden_state, **F64)
    torch.testing.assert_close(pooled, ref.pooler_output, **F64)


def test_bert_classifier_matches_transformers_in_float64():
    torch.manual_seed(0)
    hf_cfg = _hf_bert_config(num_labels=3)
    hf = transformers.BertForSequenceClassification(hf_cfg).double().eval()
    ours = _ours_bert(hf_cfg, num_labels=3)
    assert load_hf_weights(ours, hf.state_dict()) == []  # the head came along
    ours.double().eval()
    ids, mask, types = _bert_inputs(hf_cfg.vocab_size)
    with torch.no_grad():
        ref = hf(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        torch.testing.assert_close(ours(ids, mask, types), ref, **F64)


def test_gpt_matches_transformers_gpt2lmheadmodel_in_float64():
    torch.manual_seed(0)
    hf_cfg = _hf_gpt_config()
    hf = transformers.GPT2LMHeadModel(hf_cfg).double().eval()
    ours = gpt.build(gpt.GPTConfig(block_size=48, vocab_size=120, n_layer=2, n_head=4, n_embd=32))
    assert load_hf_weights(ours, hf.state_dict()) == []
    ours.double().eval()
    idx = torch.randint(0, 120, (2, 48), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(ours(idx), hf(input_ids=idx).logits, **F64)
    assert ours.lm_head.weight is ours.wte.weight  # still tied after loading


def test_gpt_loads_a_bare_gpt2model_state_dict_too():
    torch.manual_seed(0)
    hf = transformers.GPT2Model(_hf_gpt_config()).eval()
    ours = gpt.build(gpt.GPTConfig(block_size=48, vocab_size=120, n_layer=2, n_head=4, n_embd=32))
    load_hf_weights(ours, hf.state_dict())
    torch.testing.assert_close(ours.h[1].attn.c_attn.weight, hf.h[1].attn.c_attn.weight.t())


# ---- the --weights PATH route: save_pretrained directory -> config_from_hf -> load ---------------


def test_bert_from_a_save_pretrained_directory(tmp_path):
    torch.manual_seed(0)
    hf_cfg = _hf_bert_config(num_labels=3)
    hf = transformers.BertForSequenceClassification(hf_cfg).eval()
    hf.save_pretrained(tmp_path)
    cfg = config_from_hf(tmp_path, seq_len=24, dropout=0.0)
    assert (cfg.n_embd, cfg.n_layer, cfg.num_labels) == (32, 2, 3)
    ours = bert.build(cfg).eval()
    assert load_hf_weights(ours, tmp_path) == []
    ids, mask, types = _bert_inputs(hf_cfg.vocab_size)
    with torch.no_grad():
        ref = hf(input_ids=ids, attention_mask=mask, token_type_ids=types).logits
        torch.testing.assert_close(ours(ids, mask, types), ref, rtol=1e-5, atol=1e-5)


def test_gpt_from_a_pytorch_model_bin_directory(tmp_path):
    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(_hf_gpt_config()).eval()
    hf.config.save_pretrained(tmp_path)  # config.json
    torch.save(hf.state_dict(), tmp_path / "pytorch_model.bin")  # the older file format
    ours = gpt.build(config_from_hf(tmp_path, dropout=0.0)).eval()
    load_hf_weights(ours, tmp_path)
    idx = torch.randint(0, 120, (2, 48), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(ours(idx), hf(input_ids=idx).logits, rtol=1e-5, atol=1e-5)


def test_gpt_from_a_safetensors_directory(tmp_path):
    torch.manual_seed(0)
    hf = transformers.GPT2LMHeadModel(_hf_gpt_config()).eval()
    hf.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    ours = gpt.build(config_from_hf(tmp_path)).eval()
    load_hf_weights(ours, tmp_path)
    idx = torch.randint(0, 120, (1, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        torch.testing.assert_close(ours(idx), hf(input_ids=idx).logits, rtol=1e-5, atol=1e-5)


# ---- mismatches are caught with a message that names the keys and the fix ----------------------


def test_wrong_width_is_reported_with_keys_shapes_and_fix(tmp_path):
    hf = transformers.BertModel(_hf_bert_config(hidden_size=48, num_attention_heads=4))
    hf.save_pretrained(tmp_path)
    ours = _ours_bert(_hf_bert_config())  # 32 wide
    with pytest.raises(ValueError) as err:
        load_hf_weights(ours, tmp_path)
    msg = str(err.value)
    assert str(tmp_path) in msg
    assert "embeddings.word_embeddings.weight (ours: word_emb.weight): (120, 48) vs (120, 32)" in msg
    assert "n_embd=48" in msg and "n_embd=32" in msg
    assert "config_from_hf" in msg and "--size" in msg


def test_a_bert_large_checkpoint_is_named_as_such():
    # shapes only: both models live on the meta device, nothing is allocated
    with torch.device("meta"):
        large = transformers.BertModel(_hf_bert_config(
            vocab_size=30522, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
            intermediate_size=4096, max_position_embeddings=512))
        base = bert.build("full")
    with pytest.raises(ValueError, match=r"(?s)the checkpoint is .*\(BERT-large\); the model is "
                                         r".*\(BERT-base\).*fix"):
        load_hf_weights(base, large.state_dict())


def test_extra_layers_and_foreign_checkpoints_are_refused():
    ours = gpt.build(gpt.GPTConfig(block_size=48, vocab_size=120, n_layer=1, n_head=4, n_embd=32))
    deeper = transformers.GPT2LMHeadModel(_hf_gpt_config(n_layer=2)).state_dict()
    with pytest.raises(ValueError, match=r"not in the model \(\d+\): h\.1\."):
        load_hf_weights(ours, deeper)
    with pytest.raises(ValueError, match="BERT checkpoint but the model is GPT"):
        load_hf_weights(ours, transformers.BertModel(_hf_bert_config()).state_dict())
    untied = dict(deeper, **{"lm_head.weight": torch.zeros(120, 32)})
    with pytest.raises(ValueError, match="untied"):
        load_hf_weights(ours, untied)


def test_bad_paths_and_configs_say_what_is_wrong(tmp_path):
    ours = gpt.build("tiny")
    with pytest.raises(ValueError, match="does not exist.*nothing is downloaded"):
        load_hf_weights(ours, tmp_path / "gpt2")
    with pytest.raises(ValueError, match="no model.safetensors or pytorch_model.bin"):
        load_hf_weights(ours, tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "mistral"}))
    with pytest.raises(ValueError, match="model_type 'mistral' is not supported"):
        config_from_hf(tmp_path)
    cfg = _hf_bert_config(hidden_act="relu").to_dict()
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="hidden_act='relu'"):
        config_from_hf(tmp_path)
    del cfg["hidden_act"], cfg["vocab_size"]
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="no 'vocab_size' entry"):
        config_from_hf(tmp_path)
