"""The text-generation parity rows of the persimmon family: persimmon."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "persimmon": [
        ("default", {}),  # qk_layernorm on, relu2, query_key_value per head
        ("no-qk-layernorm", dict(qk_layernorm=False)),
    ],
}
