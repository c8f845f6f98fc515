"""The text-generation parity rows of the glm4_moe family: glm4_moe."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "glm4_moe": [
        ("default", {}),  # rotary on half the head, layer 0 dense, sigmoid group router, renormalized
        ("qk-norm-bias", dict(use_qk_norm=True, attention_bias=True)),
        ("full-rotary-unnormalized", dict(rope_parameters=dict(rope_type="default", rope_theta=10000.0,
                                                               partial_rotary_factor=1.0),
                                          norm_topk_prob=False, routed_scaling_factor=2.5)),
    ],
}
