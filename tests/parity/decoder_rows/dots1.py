"""The text-generation parity rows of the dots1 family: dots1."""

from harness import DROP

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "dots1": [
        ("default", {}),  # q/k norms, layer 0 dense, sigmoid group router, not renormalized
        ("norm-topk-scaled-bias", dict(norm_topk_prob=True, routed_scaling_factor=2.0, attention_bias=True)),
        ("sliding-from-layer-1", dict(sliding_window=16, max_window_layers=1)),
        # Dots1Config.__post_init__'s layer_types when config.json has none
        ("no-layer-types", dict(sliding_window=16, max_window_layers=1, _json=dict(layer_types=DROP))),
    ],
}
