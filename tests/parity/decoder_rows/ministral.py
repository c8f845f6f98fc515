"""The text-generation parity rows of the ministral family: ministral."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "ministral": [
        ("default", {}),  # every layer sliding, window 4096
        ("sliding-window-16", dict(sliding_window=16)),
        ("layer-types", dict(sliding_window=16, layer_types=["full_attention", "sliding_attention"])),
    ],
}
