"""The text-generation parity rows of the glm family: glm, glm4."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "glm": [
        ("default", {}),  # interleaved rotary on half the head, gate_up_proj, q/k/v bias
        ("no-attention-bias", dict(attention_bias=False)),
        ("rotary-full-head", dict(rope_parameters=dict(rope_type="default", partial_rotary_factor=1.0))),
    ],
    "glm4": [
        ("default", {}),  # post_self_attn_layernorm, post_mlp_layernorm
        ("tied", dict(tie_word_embeddings=True)),
    ],
}
