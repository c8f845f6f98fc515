"""The text-generation parity rows of the gemma family: gemma, gemma2, gemma3_text, vaultgemma, gemma4_text,
gemma4_unified_text, gemma3n_text."""

from harness import DROP

SLIDING_FULL = ["sliding_attention", "full_attention"]
# Softcaps that engage: attention scores reach several units here and logits ~150. The final cap is
# 20, not ~1: at 1.5 tanh rounds the top logits to exactly 1.0 and greedy argmax becomes a tie (the
# reference then picks token 0); at 20 the logits move by up to ~130 and the greedy top-2 gap
# stays >= 0.07. transformers' Gemma3Attention ignores attn_logit_softcapping (so must mobius).
SOFTCAPS = dict(attn_logit_softcapping=1.0, final_logit_softcapping=20.0)

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "gemma": [
        ("default", {}),  # tied, (1 + weight) norms, embeddings * sqrt(hidden_size)
        ("untied", dict(tie_word_embeddings=False)),
        ("attention-bias", dict(attention_bias=True)),
        ("legacy-gelu", dict(_json=dict(hidden_act="gelu"))),  # GemmaConfig reads it as tanh gelu
        ("old-schema", dict(rope_theta=500.0)),
    ],
    "gemma2": [
        ("default", {}),  # softcaps 50 / 30, sliding_window 4096, layers sliding, full
        ("softcap-window-16", dict(sliding_window=16, **SOFTCAPS)),
        ("no-softcap-window-8", dict(sliding_window=8, attn_logit_softcapping=None,
                                     final_logit_softcapping=None)),
        ("full-sliding-untied-bias", dict(layer_types=SLIDING_FULL[::-1], sliding_window=12,
                                          tie_word_embeddings=False, attention_bias=True, **SOFTCAPS)),
        ("no-layer-types", dict(sliding_window=16, _json=dict(layer_types=DROP))),  # default pattern
        ("old-schema", dict(sliding_window=16, rope_theta=1000.0,
                            rope_scaling=dict(type="linear", factor=2.0))),
    ],
    "vaultgemma": [
        ("default", {}),  # gemma2 without the post-attention / post-feedforward norms
        ("softcap-window-16", dict(sliding_window=16, **SOFTCAPS)),
        ("full-sliding-untied", dict(layer_types=SLIDING_FULL[::-1], sliding_window=12, tie_word_embeddings=False,
                                     attn_logit_softcapping=None, final_logit_softcapping=None)),
    ],
    "gemma3_text": [
        ("default", {}),  # q/k norms; 2 layers with the default pattern 6: both sliding
        ("window-16-softcap", dict(layer_types=SLIDING_FULL, sliding_window=16, **SOFTCAPS)),
        ("rope-per-type", dict(layer_types=SLIDING_FULL, sliding_window=12, rope_parameters=dict(
            full_attention=dict(rope_type="linear", factor=4.0, rope_theta=100000.0),
            sliding_attention=dict(rope_type="default", rope_theta=100.0)))),
        ("yarn-full", dict(layer_types=SLIDING_FULL, sliding_window=16, max_position_embeddings=128,
                           rope_parameters=dict(
                               full_attention=dict(rope_type="yarn", factor=4.0, rope_theta=10000.0,
                                                   original_max_position_embeddings=32),
                               sliding_attention=dict(rope_type="default", rope_theta=1000.0)))),
        ("untied-bias", dict(layer_types=SLIDING_FULL, sliding_window=16, tie_word_embeddings=False,
                             attention_bias=True)),
        # pre-transformers-5 config: rope_theta + rope_scaling (full), rope_local_base_freq
        # (sliding), sliding_window_pattern instead of layer_types
        ("old-schema", dict(rope_theta=20000.0, rope_local_base_freq=500.0,
                            rope_scaling=dict(rope_type="linear", factor=8.0), sliding_window=16,
                            sliding_window_pattern=2, _json=dict(sliding_window_pattern=2,
                                                                 layer_types=DROP,
                                                                 _sliding_window_pattern=DROP))),
    ],
    # TYPE_BASE: layers sliding, full, sliding, full; window 16 (below the prefill); head sizes 16
    # (sliding) and 32 (full, global_head_dim); per-layer inputs of 8; the last 2 layers reuse the
    # keys and values of layers 0 and 1 (no cache of their own). onnxruntime-genai 0.18's gemma4
    # types read per_layer_inputs computed outside the decoder: --runtime none.
    "gemma4_text": [
        ("default", dict(_runtime="none")),  # proportional RoPE on a quarter of the full layers' head
        ("k-eq-v-double-wide-softcap", dict(attention_k_eq_v=True, num_global_key_value_heads=1,
                                            use_double_wide_mlp=True, final_logit_softcapping=20.0,
                                            _runtime="none")),
        # no per-layer inputs, no KV sharing (transformers 5.23 slices the absent per-layer inputs
        # before the first KV-shared layer: a TypeError with both)
        ("untied-bias-rope-no-ple", dict(hidden_size_per_layer_input=0, num_kv_shared_layers=0,
                                         tie_word_embeddings=False, attention_bias=True, rope_parameters=dict(
                                             full_attention=dict(rope_type="proportional", partial_rotary_factor=0.5,
                                                                 factor=2.0, rope_theta=10000.0),
                                             sliding_attention=dict(rope_type="default", rope_theta=100.0)),
                                         _runtime="none")),
        # no layer_types: Gemma4TextConfig's pattern (every 6th full), the last layer forced full
        ("default-layer-types", dict(num_kv_shared_layers=0, layer_types=None, _json=dict(layer_types=DROP), _runtime="none")),
    ],
    # TYPE_BASE: gemma4_text's without per-layer inputs (Gemma4UnifiedTextConfig has no such fields);
    # --runtime none as gemma4_text (genai's decoder cannot skip the KV-shared layers' caches)
    "gemma4_unified_text": [
        ("default", dict(_runtime="none")),
        # keys are values on the full layers, a double-wide MLP on the KV-shared ones, a final
        # softcap; config.json with gemma4_text's per-layer-input and MoE fields, which
        # Gemma4UnifiedTextConfig keeps but its model never reads
        ("k-eq-v-double-wide-softcap-foreign-fields", dict(
            attention_k_eq_v=True, num_global_key_value_heads=1, use_double_wide_mlp=True, final_logit_softcapping=20.0,
            _json=dict(hidden_size_per_layer_input=16, vocab_size_per_layer_input=64, enable_moe_block=True),
            _runtime="none")),
    ],
    # TYPE_BASE: AltUp's 4 streams, Laurel, per-layer inputs, the last 2 layers reusing layers 0 and 1's
    # caches, gaussian top-k gates on layers 0 and 1, final softcap 30. onnxruntime-genai 0.18 has no
    # gemma3n type and its decoder cannot skip the KV-shared layers' caches: --runtime none.
    "gemma3n_text": [
        ("default", dict(_runtime="none")),
        # another active stream without the corrected output's scale, no KV sharing, dense MLPs of
        # per-layer widths, untied, final softcap 20
        ("active-2-unscaled-widths-no-sharing", dict(
            altup_active_idx=2, altup_correct_scale=False, num_kv_shared_layers=0, intermediate_size=[128, 96, 128, 64],
            activation_sparsity_pattern=None, tie_word_embeddings=False, final_logit_softcapping=20.0,
            _runtime="none")),
    ],
}
