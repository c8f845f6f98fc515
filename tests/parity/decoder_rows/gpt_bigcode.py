"""The text-generation parity rows of the gpt_bigcode family: gpt_bigcode."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "gpt_bigcode": [
        ("default", {}),  # multi_query: one key/value head
        ("multi-head", dict(multi_query=False)),  # c_attn per head [q | k | v]
        ("untied", dict(tie_word_embeddings=False)),
    ],
}
