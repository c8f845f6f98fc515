"""The text-generation parity rows of the afmoe family: afmoe."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "afmoe": [
        ("default", {}),  # gated attention, q/k norms, RoPE on the sliding layers; sigmoid + expert_bias router
        ("mup-route-scale-2-shared", dict(mup_enabled=True, route_scale=2.5, num_shared_experts=2)),
        ("all-sparse-no-shared-bias", dict(num_dense_layers=0, num_shared_experts=0, attention_bias=True)),
    ],
}
