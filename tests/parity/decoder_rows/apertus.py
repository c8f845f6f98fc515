"""The text-generation parity rows of the apertus family: apertus."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    # Llama-like types with DecoderSpec options (breadth-c)
    "apertus": [
        ("default", {}),  # xIELU MLP, per-head q/k norm, attention_layernorm/feedforward_layernorm
        ("attention-bias", dict(attention_bias=True)),
    ],
}
