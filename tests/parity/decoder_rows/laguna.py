"""The text-generation parity rows of the laguna family: laguna, mellum."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "laguna": [
        ("default", {}),  # softplus gate per head, q/k norms, sigmoid + correction bias router, shared experts
        ("per-element-gate-softcap-scale-bias", dict(gating="per-element", moe_router_logit_softcapping=2.0,
                                                     moe_routed_scaling_factor=2.5, attention_bias=True)),
        ("heads-per-layer", dict(num_attention_heads_per_layer=[4, 8, 2])),
    ],
    "mellum": [
        ("default", {}),  # Qwen3-MoE attention and experts on every layer, RoPE by layer type
        ("dense-first-no-norm-bias", dict(mlp_layer_types=["dense", "sparse", "sparse"], norm_topk_prob=False,
                                          attention_bias=True)),
    ],
}
