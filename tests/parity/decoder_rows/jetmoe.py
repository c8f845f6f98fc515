"""The text-generation parity rows of the jetmoe family: jetmoe."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "jetmoe": [
        ("default", {}),  # mixture of attention heads + MoE mlp, 2 of 4 experts each; tied
        ("untied-rms-eps-1e-5", dict(tie_word_embeddings=False, rms_norm_eps=1e-5)),
        ("gelu-mqa-top-4-of-8", dict(activation_function="gelu", num_local_experts=8,
                                     num_experts_per_tok=4, num_key_value_heads=1)),
    ],
}
