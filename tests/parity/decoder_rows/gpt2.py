"""The text-generation parity rows of the gpt2 family: gpt2, gpt-sw3."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    # Learned absolute positions, ALiBi, LayerNorm, fused q/k/v (breadth-b)
    "gpt2": [
        ("default", {}),  # Conv1D, fused c_attn, gelu_new, tied
        ("scale-inverse-layer-idx", dict(scale_attn_by_inverse_layer_idx=True)),
        ("no-scale-attn-weights", dict(scale_attn_weights=False)),
        ("reorder-and-upcast-attn", dict(reorder_and_upcast_attn=True)),
        ("untied", dict(tie_word_embeddings=False)),
    ],
    "gpt-sw3": [  # GPT2Config and GPT2LMHeadModel under the model type gpt-sw3
        ("default", {}),
        ("untied", dict(tie_word_embeddings=False)),
    ],
}
