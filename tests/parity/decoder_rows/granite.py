"""The text-generation parity rows of the granite family: granite, hyperclovax."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "granite": [
        ("default", {}),  # attention_multiplier 1.0
        ("multipliers", dict(embedding_multiplier=3.0, residual_multiplier=0.5,
                             attention_multiplier=0.15, logits_scaling=4.0)),
        ("tied", dict(tie_word_embeddings=True, logits_scaling=2.0)),
    ],
    "hyperclovax": [
        ("default", {}),  # post_norm1 / post_norm2
        ("multipliers", dict(embedding_multiplier=3.0, residual_multiplier=0.5,
                             attention_multiplier=0.15, logits_scaling=0.25)),
        ("no-post-norm", dict(use_post_norm=False, logits_scaling=2.0)),
    ],
}
