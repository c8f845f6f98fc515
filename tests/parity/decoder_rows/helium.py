"""The text-generation parity rows of the helium family: helium."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "helium": [
        ("default", {}),  # interleaved rope, o_proj without bias
        ("attention-bias", dict(attention_bias=True)),
    ],
}
