"""The text-generation parity rows of the bloom family: bloom."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "bloom": [
        ("default", {}),  # ALiBi from the mask's cumulative positions
        ("heads-12", dict(hidden_size=96, num_attention_heads=12)),  # 8 + 4 interleaved slopes
        ("residual-post-layernorm", dict(apply_residual_connection_post_layernorm=True)),
        ("untied", dict(tie_word_embeddings=False)),
    ],
}
