"""GGUF gemma4 -> `mobius build --gguf` (model type gemma4_text), against the Hugging Face checkpoint
the file was made from.

transformers' own GGUF loader cannot be the reference: it keeps Gemma4TextConfig's defaults for
what it does not map (the full layers' head size, layer_types, the RoPE, the per-layer input width,
the KV-shared layers). So a tiny random Gemma4ForCausalLM (the parity harness' gemma4_text sizes:
sliding / full layers of head size 16 / 32, per-layer inputs of 8, the last 2 layers KV-shared, the
full layers' proportional RoPE on a quarter of the head) is written as convert_hf_to_gguf.py
Gemma4Model writes it (gguf_testlib.write_gemma4_gguf) and the build of the file (--runtime none,
as the parity rows: genai cannot skip the shared layers' caches) is compared with that model, or,
for a quantized file, with the model holding the values the file reads back as
(gguf_testlib.stored_model). Expected:
- config: every field the file carries equals the original config's (rms_norm_eps as the float32
  GGUF stores), per_layer_config and the rope fraction (from rope_freqs.weight) included;
- F32: the package's weights byte-identical to the build of the original checkpoint;
- logits of a left-padded prefill batch and a decode step on its cache within 1e-4 of the reference.
"""

import filecmp
import json

import numpy as np
import pytest

import harness as H
from gguf_testlib import QT, assert_matches_transformers, dump_json, stored_model, write_gemma4_gguf

ROWS = [
    ("f32", QT.F32, {}),
    # the full layers take k_proj's output as values (no attn_v) with their own key/value head
    # count (head_count_kv per layer), the KV-shared layers' MLP twice as wide (feed_forward_length
    # per layer), a final softcap
    ("f32-k-eq-v-double-wide-softcap", QT.F32, dict(attention_k_eq_v=True, num_global_key_value_heads=1,
                                                    use_double_wide_mlp=True, final_logit_softcapping=20.0)),
    ("q8_0-untied", QT.Q8_0, dict(tie_word_embeddings=False)),
]

FIELDS = ["model_type", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
          "num_key_value_heads", "head_dim", "sliding_window", "layer_types", "rope_parameters", "vocab_size",
          "max_position_embeddings", "tie_word_embeddings", "attention_k_eq_v", "num_kv_shared_layers",
          "use_double_wide_mlp", "hidden_size_per_layer_input", "vocab_size_per_layer_input",
          "final_logit_softcapping", "per_layer_config", "attention_bias", "hidden_activation"]


@pytest.mark.parametrize("name,qtype,overrides", ROWS, ids=[r[0] for r in ROWS])
def test_gemma4_gguf_equals_the_original_model(tmp_path, name, qtype, overrides):
    original = H.write_checkpoint("gemma4_text", overrides, tmp_path / "hf")
    path = tmp_path / "gemma4.gguf"
    write_gemma4_gguf(original, path, qtype)
    ref = original if qtype == QT.F32 else stored_model(original, qtype)

    ours = dump_json("config", path)
    want = json.loads(json.dumps(original.config.to_dict()))
    for f in FIELDS:
        assert ours[f] == want[f], f"{f}: ours {ours[f]!r}, original {want[f]!r}"
    assert ours["rms_norm_eps"] == float(np.float32(want["rms_norm_eps"]))

    r = H.run_mobius("build", "--gguf", path, tmp_path / "out-gguf", "--runtime", "none")
    assert r.returncode == 0, r.stderr
    if qtype == QT.F32:
        H.build(tmp_path / "hf", tmp_path / "out-original", "--runtime", "none")
        assert filecmp.cmp(H.data_path(tmp_path / "out-gguf"), H.data_path(tmp_path / "out-original"), shallow=False)
    assert_matches_transformers(tmp_path / "out-gguf", H.float64(ref))
