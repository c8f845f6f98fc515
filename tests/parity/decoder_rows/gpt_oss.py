"""The text-generation parity rows of the gpt_oss family: gpt_oss."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "gpt_oss": [
        ("default", {}),  # sinks, sliding layer 0 (window 16), yarn, clamped SwiGLU experts
        ("no-attention-bias", dict(attention_bias=False)),
    ],
}
