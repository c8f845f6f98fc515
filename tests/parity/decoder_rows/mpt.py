"""The text-generation parity rows of the mpt family: mpt."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "mpt": [
        ("default", {}),  # ALiBi, alibi_bias_max 8, no biases
        ("heads-12", dict(hidden_size=96, num_attention_heads=12)),  # slopes of 16, interleaved
        ("alibi-bias-max-16", dict(attn_config=dict(alibi_bias_max=16))),  # ignored, as by MptModel
        ("clip-qkv", dict(attn_config=dict(clip_qkv=0.5))),
        ("softmax-scale", dict(attn_config=dict(softmax_scale=0.3))),
        ("untied", dict(tie_word_embeddings=False)),
    ],
}
