"""The text-generation parity rows of the starcoder2 family: starcoder2."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "starcoder2": [
        ("default", {}),  # LayerNorm with bias, c_fc/c_proj, use_bias
        ("sliding-window-16", dict(sliding_window=16)),
        ("no-bias-untied", dict(use_bias=False, tie_word_embeddings=False)),
    ],
}
