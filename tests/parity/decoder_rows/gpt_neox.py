"""The text-generation parity rows of the gpt_neox family: gpt_neox."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "gpt_neox": [
        ("default", {}),  # query_key_value per head, use_parallel_residual, rotary_pct 0.25
        ("sequential-residual", dict(use_parallel_residual=False)),
        ("no-attention-bias", dict(attention_bias=False)),
        ("rotary-pct-old-schema", dict(rotary_pct=0.5, rotary_emb_base=20000.0)),
        ("tied", dict(tie_word_embeddings=True)),
    ],
}
