"""The text-generation parity rows of the laguna family: laguna, mellum, mimo_v2_flash."""

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
    "mimo_v2_flash": [
        # layer 0 full (1 KV head, no sinks), 1-2 sliding (2 KV heads, sinks); values of 16 beside
        # q/k of 24, times 0.707; RoPE on int(24 * 0.334) = 8 channels; layer 0 dense, V3 router.
        # A cache layout per layer type, which onnxruntime-genai cannot read: --runtime none
        ("default", dict(_runtime="none")),
        # attention_value_scale null (1), window sliding_window_size + 1, q/k/v bias, routed scale;
        # RoPE entries as given (the sliding one without partial_rotary_factor: 0.334)
        ("bias-no-value-scale-window-size-rope", dict(
            attention_bias=True, attention_value_scale=None, sliding_window_size=11, routed_scaling_factor=2.5,
            _runtime="none",
            rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 10000.0,
                                                "partial_rotary_factor": 0.5},
                             "sliding_attention": {"rope_type": "default", "rope_theta": 500.0}})),
    ],
}
