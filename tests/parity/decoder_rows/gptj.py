"""The text-generation parity rows of the gptj family: gptj, codegen."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "gptj": [
        ("default", {}),  # interleaved rotary on 8 of 16 channels
        ("rotary-full-head", dict(rotary_dim=16)),
        ("tied", dict(tie_word_embeddings=True)),  # lm_head.bias stays
    ],
    "codegen": [
        ("default", {}),  # qkv_proj as [mp_num 4, (q, v, k), 1 head]
        ("heads-8", dict(num_attention_heads=8, rotary_dim=4)),  # 2 heads per mp group
    ],
}
