"""The text-generation parity rows of the seed_oss family: seed_oss."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "seed_oss": [
        ("default", {}),  # q/k/v bias, o_proj without
        ("out-bias", dict(attention_out_bias=True)),
    ],
}
