"""GGUF gpt-oss -> `mobius build --gguf`, against the Hugging Face checkpoint the file was made from.

transformers' own GGUF loader cannot be the reference here: it maps none of llama.cpp's expert
tensors (GptOssTensorProcessor expects ffn_*_projs; convert_hf_to_gguf.py writes ffn_{gate,up,down}_exps)
and keeps GptOssConfig's defaults for the fields it does not map (sliding_window: llama.cpp writes
attention.sliding_window, transformers reads gpt-oss.sliding_window). So a tiny random
GptOssForCausalLM (the parity harness' sizes, swiglu_limit 7: GGUF stores no SwiGLU limit and
llama.cpp's graph uses GptOssConfig's 7.0) is written as convert_hf_to_gguf.py GptOssModel writes it
(gguf_testlib.write_gpt_oss_gguf) and the build of the file is compared with that model, or, for a
quantized file, with the model holding the values the file reads back as (gguf_testlib.
gpt_oss_stored_model). Expected:
- config: every field the file carries equals the original config's (rms_norm_eps as the float32
  GGUF stores), the YaRN rope included;
- tensors: every Hugging Face tensor as the checkpoint produces it (mobius-gguf-dump hf-tensor; the
  interleaved gate_up_proj and its bias, the transposed down_proj) bit-identical to the reference's;
- F32: the package's weights byte-identical to the build of the original checkpoint;
- logits of a left-padded prefill batch and a decode step on its cache within 1e-4 of the reference.
"""

import filecmp

import numpy as np
import pytest
import torch

import harness as H
from gguf_testlib import QT, assert_matches_transformers, dump_floats, dump_json, gpt_oss_stored_model, write_gpt_oss_gguf

OVERRIDES = {"swiglu_limit": 7.0}

ROWS = [
    # split gate / up (the converter's default), YaRN betas written (current converter)
    ("f32", QT.F32, None, {}),
    # llama.cpp's released layout: MXFP4 experts, Q8_0 attention / embeddings; no YaRN betas (files
    # converted before the converter wrote them: GptOssConfig's 32 / 1)
    ("q8_0-mxfp4-experts-no-betas", QT.Q8_0, QT.MXFP4, {"yarn_betas": False}),
    # --fuse-gate-up-exps: ffn_gate_up_exps [E, 2I, hidden] (gate | up) and its bias
    ("f32-fused-gate-up", QT.F32, None, {"fuse_gate_up": True}),
]

FIELDS = ["model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
          "num_key_value_heads", "head_dim", "sliding_window", "layer_types", "rope_parameters", "vocab_size",
          "max_position_embeddings", "tie_word_embeddings", "num_local_experts", "num_experts_per_tok",
          "attention_bias"]


@pytest.mark.parametrize("name,qtype,experts_qtype,opts", ROWS, ids=[r[0] for r in ROWS])
def test_gpt_oss_gguf_equals_the_original_model(tmp_path, name, qtype, experts_qtype, opts):
    original = H.write_checkpoint("gpt_oss", OVERRIDES, tmp_path / "hf")
    path = tmp_path / "gpt-oss.gguf"
    write_gpt_oss_gguf(original, path, qtype, experts_qtype, **opts)
    ref = original if qtype == QT.F32 else gpt_oss_stored_model(original, qtype, experts_qtype)

    ours = dump_json("config", path)
    want = original.config.to_dict()
    for f in FIELDS:
        assert ours[f] == want[f], f"{f}: ours {ours[f]!r}, original {want[f]!r}"
    assert ours["rms_norm_eps"] == float(np.float32(want["rms_norm_eps"]))
    for t_name, t in ref.state_dict().items():
        if t_name == "lm_head.weight" and original.config.tie_word_embeddings:
            continue
        got = dump_floats("hf-tensor", path, t_name, tmp_path).reshape(tuple(t.shape))
        assert np.array_equal(got.view(np.uint32), t.numpy().view(np.uint32)), f"{t_name} differs"

    r = H.run_mobius("build", "--gguf", path, tmp_path / "out-gguf")
    assert r.returncode == 0, r.stderr
    if qtype == QT.F32:
        H.build(tmp_path / "hf", tmp_path / "out-original")
        assert filecmp.cmp(H.data_path(tmp_path / "out-gguf"), H.data_path(tmp_path / "out-original"), shallow=False)
    assert_matches_transformers(tmp_path / "out-gguf", H.float64(ref))


def test_gpt_oss_gguf_without_an_up_partner_names_it(tmp_path):
    """A file whose ffn_gate_exps has no ffn_up_exps (the two make gate_up_proj) is refused, naming
    the tensor."""
    original = H.write_checkpoint("gpt_oss", OVERRIDES, tmp_path / "hf")
    path = tmp_path / "gpt-oss.gguf"
    write_gpt_oss_gguf(original, path, skip=("blk.1.ffn_up_exps.weight",))
    r = H.run_mobius("build", "--gguf", path, tmp_path / "out")
    assert r.returncode != 0
    assert (f"{path}: tensor 'blk.1.ffn_gate_exps.weight': its ffn_up_exps partner is missing "
            "(both make model.layers.1.mlp.experts.gate_up_proj)") in r.stderr, r.stderr
