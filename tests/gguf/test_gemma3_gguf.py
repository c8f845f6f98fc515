"""GGUF gemma3 -> the Hugging Face gemma3_text config and state dict, against transformers' GGUF
loader. gemma3_text is registered by the Gemma architecture (not in this file's scope), so this
checks what the build would bind: the synthesized config.json (mobius-gguf-dump config) and every
tensor as the checkpoint produces it (mobius-gguf-dump hf-tensor).

A tiny random Gemma3ForCausalLM (7 layers: the 6th is global) is written as convert_hf_to_gguf.py
Gemma3Model does (every *norm.weight stored as 1 + w). Expected:
- config: every field transformers derives from the file equals ours; query_pre_attn_scalar, which
  GGUF does not store, is llama.cpp's value (head_dim; hidden / heads for the 62-layer 27B), the
  original model's here, where transformers falls back to its class default 256;
- tensors: bit-identical to transformers' loaded state dict (dequantized, norms minus 1), and to the
  original model except for the float32 rounding of (w + 1) - 1 in the norms.
"""

import numpy as np
import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

import decoder_harness as D
import harness as H
from gguf_testlib import QT, dump_floats, dump_json, write_gguf

FIELDS = ["model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
          "num_key_value_heads", "head_dim", "rms_norm_eps", "sliding_window", "layer_types",
          "rope_parameters", "vocab_size", "max_position_embeddings", "tie_word_embeddings",
          "hidden_activation"]


@pytest.mark.parametrize("qtype", [QT.F32, QT.Q8_0], ids=lambda t: t.name)
def test_gemma3_config_and_tensors_match_transformers(tmp_path, qtype):
    torch.manual_seed(0)
    config = AutoConfig.for_model(
        "gemma3_text", **{**D.BASE, "num_hidden_layers": 7, "head_dim": 16, "query_pre_attn_scalar": 16,
                          "sliding_window": 16, "rope_parameters": {
                              "full_attention": {"rope_type": "default", "rope_theta": 50000.0},
                              "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}})
    original = AutoModelForCausalLM.from_config(config, dtype=torch.float32).eval()
    H.rerandomize(original)
    path = tmp_path / "gemma3.gguf"
    write_gguf(original, path, qtype)

    ref = AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file=path.name, dtype=torch.float32).eval()
    ours = dump_json("config", path)
    want = ref.config.to_dict()
    for f in FIELDS:
        assert ours[f] == want[f], f"{f}: ours {ours[f]!r}, transformers {want[f]!r}"
    assert ours["layer_types"][5] == "full_attention" and ours["layer_types"].count("full_attention") == 1
    assert ours["query_pre_attn_scalar"] == original.config.query_pre_attn_scalar == config.head_dim

    ref_state = ref.state_dict()
    for name, t in original.state_dict().items():
        if name == "lm_head.weight":  # tied: bound from model.embed_tokens.weight
            continue
        got = dump_floats("hf-tensor", path, name, tmp_path).reshape(tuple(t.shape))
        expect = ref_state[name].numpy()
        assert np.array_equal(got.view(np.uint32), expect.view(np.uint32)), f"{name} differs from transformers"
        w = t.detach().numpy()
        if name.endswith("norm.weight"):
            assert np.array_equal(got, (w + np.float32(1)) - np.float32(1)), name
        elif qtype == QT.F32:
            assert np.array_equal(got, w), name
