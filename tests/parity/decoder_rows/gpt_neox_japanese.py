"""The text-generation parity rows of the gpt_neox_japanese family: gpt_neox_japanese."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "gpt_neox_japanese": [
        ("default", {}),  # query_key_value per head, no biases but the last layer's dense_bias, full rotary, tied
        ("rotary-pct-old-schema-untied", dict(rotary_pct=0.5, rotary_emb_base=20000.0, tie_word_embeddings=False,
                                              intermediate_multiple_size=2, hidden_act="relu")),
    ],
}
