"""The text-generation parity rows of the bitnet family: bitnet (the float graph)."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "bitnet": [
        ("default", {}),  # relu2, 4 heads / 2 kv heads; attn_sub_norm before o_proj, ffn_sub_norm before down_proj
        ("silu-attention-bias", dict(hidden_act="silu", attention_bias=True)),
        ("tied-mha", dict(tie_word_embeddings=True, num_key_value_heads=4)),
    ],
}
