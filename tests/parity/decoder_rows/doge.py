"""The text-generation parity rows of the doge family: doge."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "doge": [
        ("default", {}),  # dynamic mask keeping 24 keys per query, q/k norms, residual weights, LlamaMLP
        ("keep-all-bias", dict(keep_window_size=2048, attention_bias=True, mlp_bias=True)),
        ("sliding", dict(sliding_window=16)),
    ],
}
