"""The text-generation parity rows of the hy_v3 family: hy_v3."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "hy_v3": [
        ("default", {}),  # sigmoid + correction bias, top-2 of 4 renormalized * 2.826, one shared expert
        ("all-sparse-2-shared", dict(mlp_layer_types=["sparse", "sparse"], num_shared_experts=2)),
        ("no-shared-width-scaling-1", dict(num_shared_experts=0, router_scaling_factor=1.0)),  # shared: intermediate_size
        ("bias", dict(attention_bias=True, mlp_bias=True)),
    ],
}
