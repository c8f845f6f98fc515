"""The text-generation parity rows of the diffllama family: diffllama."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "diffllama": [
        ("default", {}),  # 4 heads, 2 kv heads: each half of the values one kv head
        ("mha", dict(num_key_value_heads=4)),
        ("gqa-8-heads", dict(num_attention_heads=8)),  # head_dim 8, 4 query heads per kv head
        ("head-dim-24-3-layers", dict(head_dim=24, num_hidden_layers=3)),
        ("attention-bias", dict(attention_bias=True)),
    ],
}
