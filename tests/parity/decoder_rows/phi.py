"""The text-generation parity rows of the phi family: phi."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    # Defaults engage each family's mechanisms: partial rotary (phi 0.5, gpt_neox / stablelm 0.25,
    # persimmon / glm 0.5, gptj / codegen rotary_dim 8 of 16), parallel residual (phi, gpt_neox,
    # gptj, codegen, cohere), LayerNorm with bias (without: cohere), fused projections (phi3,
    # gpt_neox, persimmon, codegen, glm), persimmon's qk-layernorm and relu2, logit_scale 0.0625.
    "phi": [
        ("default", {}),  # lm_head bias, GQA
        ("qk-layernorm", dict(qk_layernorm=True)),
        ("tied", dict(tie_word_embeddings=True)),  # lm_head.bias stays
        ("old-schema", dict(rope_theta=20000.0, partial_rotary_factor=0.75)),
        ("old-schema-no-partial", dict(rope_theta=20000.0)),  # PhiConfig's default 0.5
    ],
}
