"""The text-generation parity rows of the olmo family: olmo, olmo2, olmo3."""

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
}
