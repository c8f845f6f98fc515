"""The text-generation parity rows of the olmo family: olmo, olmo2, olmo3, flex_olmo."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "olmo": [
        ("default", {}),  # parameter-free LayerNorm
        ("clip-qkv", dict(clip_qkv=1.0)),
        ("attention-bias", dict(attention_bias=True)),
    ],
    "olmo2": [
        ("default", {}),  # post-norm, full-width q/k norm
        ("attention-bias", dict(attention_bias=True)),
        ("tied", dict(tie_word_embeddings=True)),
    ],
    "olmo3": [
        ("default", {}),  # both layers sliding (window 4096), theta 500000
        ("sliding-16-layer1-full", dict(sliding_window=16, layer_types=["sliding_attention", "full_attention"])),
        ("rope-per-layer-type", dict(
            sliding_window=16, layer_types=["sliding_attention", "full_attention"],
            rope_parameters={"full_attention": dict(rope_type="yarn", factor=4.0, rope_theta=500000.0,
                                                    original_max_position_embeddings=32),
                             "sliding_attention": dict(rope_type="default", rope_theta=10000.0)})),
        ("old-schema", dict(sliding_window=16, layer_types=["sliding_attention", "full_attention"],
                            rope_theta=20000.0, rope_scaling=dict(rope_type="linear", factor=2.0))),
        # Olmo3Config keeps rope_type "default" when rope_scaling only has the legacy "type" key
        ("old-schema-type-key", dict(sliding_window=16, layer_types=["sliding_attention", "full_attention"],
                                     rope_theta=20000.0, rope_scaling=dict(type="linear", factor=2.0))),
    ],
    "flex_olmo": [
        ("default", {}),  # olmo2's post-norm layers, softmax top-2 of 4, not renormalized
        ("norm-topk-bias", dict(norm_topk_prob=True, attention_bias=True)),
        ("top-3-of-8-tied", dict(num_experts=8, num_experts_per_tok=3, tie_word_embeddings=True)),
    ],
}
