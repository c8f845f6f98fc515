"""The text-generation parity rows of the biogpt family: biogpt."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "biogpt": [
        ("default", {}),  # OPT layout, embeddings * sqrt(hidden_size), positions + 2, gelu, tied
        ("no-scale-embedding", dict(scale_embedding=False, hidden_act="relu")),
        ("untied", dict(tie_word_embeddings=False)),
    ],
}
