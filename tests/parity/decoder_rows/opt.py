"""The text-generation parity rows of the opt family: opt."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "opt": [
        ("default", {}),  # pre-norm, relu, positions + 2, tied
        ("post-norm", dict(do_layer_norm_before=False)),
        ("project-in-out", dict(word_embed_proj_dim=32)),
        ("no-bias", dict(enable_bias=False)),
        ("remove-final-layer-norm", dict(_remove_final_layer_norm=True)),
        ("untied-gelu", dict(tie_word_embeddings=False, activation_function="gelu")),
    ],
}
