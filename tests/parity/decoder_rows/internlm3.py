"""The text-generation parity rows of the internlm3 family: internlm3."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "internlm3": [
        ("default", {}),
        ("bias", dict(qkv_bias=True, bias=True)),
    ],
}
