"""Issue 17, must-shows 1 and 2: the Llama reference model is Llama-3.2-1B (parameter count),
computes what transformers' LlamaForCausalLM computes with the same weights (tiny config with
GQA and Llama-3 RoPE scaling, float64), and its analytic FLOPs agree with FlopCounterMode."""

from __future__ import annotations

import contextlib

import pytest
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

from trainbench.models import llama
from trainbench.models.hf_weights import config_from_hf, load_hf_weights


def test_full_preset_is_llama_3_2_1b_with_exactly_1_235_814_400_parameters():
    with torch.device("meta"):
        model = llama.build("full")
    assert model.lm_head.weight is model.embed_tokens.weight  # tied, counted once
    assert sum(p.numel() for p in model.parameters()) == 1_235_814_400
    cfg = model.cfg
    assert (cfg.n_embd, cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.ffn_dim, cfg.vocab_size, cfg.rope_theta) == (
        2048, 16, 32, 8, 8192, 128_256, 500_000.0)


def test_llama3_rope_scaling_touches_all_three_bands_in_tiny():
    cfg = llama.PRESETS["tiny"]
    plain = llama.rope_inv_freq(llama.LlamaConfig(**{**cfg.__dict__, "rope_factor": 1.0}))
    ratio = llama.rope_inv_freq(cfg) / plain
    assert ratio[0] == 1.0  # short wavelengths kept
    assert ratio[-1] == pytest.approx(1 / cfg.rope_factor)  # long ones divided by the factor
    assert ((ratio < 1) & (ratio > 1 / cfg.rope_factor)).any()  # and a smoothed band between


def test_is_causal():
    torch.manual_seed(0)
    model = llama.build("tiny").eval()
    ids = torch.randint(0, 512, (1, 20))
    changed = ids.clone()
    changed[0, 12:] = (changed[0, 12:] + 1) % 512
    with torch.no_grad():
        a, b = model(ids), model(changed)
    assert torch.allclose(a[:, :12], b[:, :12], atol=1e-6) and not torch.allclose(a[:, 12:], b[:, 12:])


# ---- equivalence with transformers ----------------------------------------------------------


def _hf_config(cfg: llama.LlamaConfig):
    transformers = pytest.importorskip("transformers")
    return transformers.LlamaConfig(
        vocab_size=cfg.vocab_size, hidden_size=cfg.n_embd, intermediate_size=cfg.ffn_dim,
        num_hidden_layers=cfg.n_layer, num_attention_heads=cfg.n_head, num_key_value_heads=cfg.n_kv_head,
        max_position_embeddings=2 * cfg.seq_len, rms_norm_eps=cfg.norm_eps, tie_word_embeddings=True,
        rope_parameters={"rope_type": "llama3", "rope_theta": cfg.rope_theta, "factor": cfg.rope_factor,
                         "low_freq_factor": cfg.rope_low_freq_factor,
                         "high_freq_factor": cfg.rope_high_freq_factor,
                         "original_max_position_embeddings": cfg.rope_original_max_pos},
    )


@pytest.fixture
def hf_llama(monkeypatch):
    """A random tiny LlamaForCausalLM in float64. transformers' LlamaRMSNorm casts its input to
    float32 whatever the model dtype (1e-7 differences in a float64 model); it is patched to
    normalise in the input's dtype, so what is compared is everything else at float64."""
    transformers = pytest.importorskip("transformers")
    from transformers.models.llama import modeling_llama

    def rms_norm(self, h):
        return self.weight * (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))

    monkeypatch.setattr(modeling_llama.LlamaRMSNorm, "forward", rms_norm)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(_hf_config(llama.PRESETS["tiny"])).double().eval()


def _ids():
    return torch.randint(0, llama.PRESETS["tiny"].vocab_size, (2, 64), generator=torch.Generator().manual_seed(1))


def test_logits_equal_transformers_llamaforcausallm_in_float64(hf_llama):
    ours = llama.build("tiny").double().eval()
    assert load_hf_weights(ours, hf_llama.state_dict()) == []
    with torch.no_grad():
        expected, got = hf_llama(_ids()).logits, ours(_ids())
    torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


def test_from_a_save_pretrained_directory_with_its_config(hf_llama, tmp_path):
    hf_llama.save_pretrained(tmp_path)
    cfg = config_from_hf(tmp_path, seq_len=64)
    assert cfg == llama.PRESETS["tiny"]
    ours = llama.build(cfg).double().eval()
    load_hf_weights(ours, tmp_path)
    with torch.no_grad():
        torch.testing.assert_close(ours(_ids()), hf_llama(_ids()).logits, rtol=1e-12, atol=1e-12)


def test_untied_or_mis_shaped_llama_checkpoints_are_refused(hf_llama):
    sd = dict(hf_llama.state_dict())
    sd["lm_head.weight"] = sd["lm_head.weight"] + 1
    with pytest.raises(ValueError, match="untied"):
        load_hf_weights(llama.build("tiny"), sd)
    wide = llama.build(llama.LlamaConfig(**{**llama.PRESETS["tiny"].__dict__, "ffn_dim": 128}))
    with pytest.raises(ValueError, match=r"(?s)model\.layers\.0\.mlp\.gate_proj\.weight.*fix:"):
        load_hf_weights(wide, hf_llama.state_dict())


# ---- FLOPs ------------------------------------------------------------------------------------


def _counted(size: str, device: str, n: int) -> tuple[float, float]:
    with torch.device(device):
        model = llama.build(size)
        ids = torch.randint(0, model.cfg.vocab_size, (n, model.cfg.seq_len))
    # CPU: the fused SDPA kernel has no FLOP formula; the math backend's matmuls are counted
    backend = sdpa_kernel(SDPBackend.MATH) if device == "cpu" else contextlib.nullcontext()
    counter = FlopCounterMode(display=False)
    with backend, counter:
        out = model(ids)
        forward = counter.get_total_flops()
        out.float().sum().backward()
    return forward / n, counter.get_total_flops() / n


def test_full_preset_flops_match_flop_counter_within_2_percent():
    forward, train = _counted("full", "meta", 1)
    assert forward == pytest.approx(llama.forward_flops_per_sample("full"), rel=0.02)
    assert train == pytest.approx(llama.train_flops_per_sample("full"), rel=0.02)


def test_tiny_preset_flops_match_on_real_tensors():
    forward, train = _counted("tiny", "cpu", 2)
    assert forward == pytest.approx(llama.forward_flops_per_sample("tiny"), rel=0.02)
    assert train == pytest.approx(llama.train_flops_per_sample("tiny"), rel=0.02)
