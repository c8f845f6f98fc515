"""The text-generation parity rows of the exaone4 family: exaone4."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "exaone4": [
        ("default", {}),  # window 4096, pattern 4: both layers sliding, both with rope
        ("sliding-16-pattern-2", dict(sliding_window=16, sliding_window_pattern=2)),  # layer 1 full, NoPE
        ("no-sliding-window", dict(sliding_window=None, layer_types=["full_attention"] * 2)),  # rope everywhere
    ],
}
