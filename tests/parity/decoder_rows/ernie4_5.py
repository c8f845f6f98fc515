"""The text-generation parity rows of the ernie4_5 family: ernie4_5, ernie4_5_moe."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "ernie4_5": [
        ("default", {}),  # interleaved rope, tied
        ("use-bias", dict(use_bias=True)),
        ("untied", dict(tie_word_embeddings=False)),
    ],
    "ernie4_5_moe": [
        ("default", {}),  # layer 0 dense, layer 1 MoE: softmax + correction bias picks, + shared experts; tied
        ("use-bias-no-shared", dict(use_bias=True, moe_num_shared_experts=0)),  # lm_head bias too
        ("every-layer-top-3-of-8-untied", dict(moe_layer_start_index=0, moe_num_experts=8, moe_k=3,
                                               tie_word_embeddings=False)),
        ("end-index-0", dict(moe_layer_start_index=0, moe_layer_end_index=0)),  # layer 0 MoE, layer 1 dense
    ],
}
