"""The text-generation parity rows of the cohere family: cohere, cohere2."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "cohere": [
        ("default", {}),  # tied, interleaved rotary
        ("qk-norm", dict(use_qk_norm=True)),  # [heads, head_dim] LayerNorm weights
        ("untied", dict(tie_word_embeddings=False)),
        ("attention-bias", dict(attention_bias=True)),
    ],
    "cohere2": [
        ("default", {}),  # both layers sliding (window 4096) with RoPE
        ("sliding-16-full-layer1", dict(sliding_window=16,
                                        layer_types=["sliding_attention", "full_attention"])),  # no RoPE
    ],
}
