"""The text-generation parity rows of the minimax_m2 family: minimax_m2."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "minimax_m2": [
        ("default", {}),  # full-width q/k norm, sigmoid router + block-held bias, renormalized
        # the released configs' legacy partial rotary: rotary_dim, rope_parameters without the factor
        ("rotary-dim-8", dict(rotary_dim=8, _json=dict(rope_parameters=dict(rope_theta=5000000.0,
                                                                            rope_type="default")))),
        ("top-3-of-8-tied", dict(num_local_experts=8, num_experts_per_tok=3, tie_word_embeddings=True)),
    ],
}
