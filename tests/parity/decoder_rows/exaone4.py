"""The text-generation parity rows of the exaone4 family: exaone4, exaone_moe."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "exaone4": [
        ("default", {}),  # window 4096, pattern 4: both layers sliding, both with rope
        ("sliding-16-pattern-2", dict(sliding_window=16, sliding_window_pattern=2)),  # layer 1 full, NoPE
        ("no-sliding-window", dict(sliding_window=None, layer_types=["full_attention"] * 2)),  # rope everywhere
    ],
    "exaone_moe": [
        ("default", {}),  # layer 0 dense, both layers sliding with rope; sigmoid group router, block-held bias
        ("sliding-16-pattern-2", dict(sliding_window=16, sliding_window_pattern=2)),  # layer 1 full, NoPE
        ("mlp-layer-types-unnormalized", dict(mlp_layer_types=["sparse", "dense"], norm_topk_prob=False,
                                              routed_scaling_factor=1.0, num_shared_experts=2)),
    ],
}
