"""The text-generation parity rows of the hunyuan_v1_dense family: hunyuan_v1_dense, hunyuan_v1_moe."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "hunyuan_v1_dense": [
        ("default", {}),  # q/k norm after rope
        ("attention-bias", dict(attention_bias=True)),
        ("ntk-alpha", dict(rope_parameters=dict(rope_type="dynamic", alpha=1000.0, factor=1.0,
                                                rope_theta=10000.0))),
    ],
    "hunyuan_v1_moe": [
        ("default", {}),  # q/k norm after rope; softmax top-2 of 4, renormalized, + shared_mlp
        ("top-k-per-layer-bias", dict(moe_topk=[3, 2], attention_bias=True)),
        ("ntk-alpha-tied", dict(rope_parameters=dict(rope_type="dynamic", alpha=1000.0, factor=1.0,
                                                     rope_theta=10000.0), tie_word_embeddings=True)),
    ],
}
