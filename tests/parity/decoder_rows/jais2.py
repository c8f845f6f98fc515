"""The text-generation parity rows of the jais2 family: jais2."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "jais2": [
        ("default", {}),  # LayerNorm, non-gated relu2 MLP, all biases
        ("no-bias", dict(attention_bias=False, mlp_bias=False)),
    ],
}
