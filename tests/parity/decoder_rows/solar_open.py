"""The text-generation parity rows of the solar_open family: solar_open."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "solar_open": [
        ("default", {}),  # every layer MoE, sigmoid group router, renormalized
        ("bias-unnormalized-scaled", dict(attention_bias=True, norm_topk_prob=False, routed_scaling_factor=2.5)),
        ("one-group-2-shared", dict(n_group=1, topk_group=1, n_shared_experts=2)),  # the class defaults' one group
    ],
}
