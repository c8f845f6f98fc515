"""The text-generation parity rows of the ernie4_5 family: ernie4_5."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "ernie4_5": [
        ("default", {}),  # interleaved rope, tied
        ("use-bias", dict(use_bias=True)),
        ("untied", dict(tie_word_embeddings=False)),
    ],
}
