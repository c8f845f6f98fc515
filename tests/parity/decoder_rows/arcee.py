"""The text-generation parity rows of the arcee family: arcee."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "arcee": [
        ("default", {}),  # non-gated relu2 MLP
        ("mlp-bias", dict(mlp_bias=True, attention_bias=True)),
    ],
}
