"""The text-generation parity rows of the gpt_neo family: gpt_neo."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "gpt_neo": [
        ("default", {}),  # layer 0 global, layer 1 local with window 16; scores not scaled
        ("local-global-window-5", dict(attention_types=[[["local", "global"], 1]], window_size=5)),
        ("untied", dict(tie_word_embeddings=False)),
    ],
}
