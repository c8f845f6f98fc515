"""The text-generation parity rows of the ctrl family: ctrl."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "ctrl": [
        ("default", {}),  # sinusoidal positions (Marian layout), embeddings * sqrt(n_embd), lm_head bias, tied
        ("untied", dict(tie_word_embeddings=False, layer_norm_epsilon=1e-5)),
    ],
}
