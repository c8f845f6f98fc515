"""The text-generation parity rows of the nemotron family: nemotron."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "nemotron": [
        ("default", {}),  # LayerNorm1P, relu2 up/down MLP, partial_rotary_factor 0.5
        ("bias", dict(attention_bias=True, mlp_bias=True)),
    ],
}
