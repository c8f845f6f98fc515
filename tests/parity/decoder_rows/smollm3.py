"""The text-generation parity rows of the smollm3 family: smollm3."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "smollm3": [
        ("default", {}),  # tied; interval 4: both layers use rope
        ("nope-layer1", dict(no_rope_layer_interval=2)),
        ("sliding-nope-layer1", dict(no_rope_layer_interval=2, use_sliding_window=True, sliding_window=16)),
    ],
}
