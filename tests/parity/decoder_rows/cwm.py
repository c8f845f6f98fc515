"""The text-generation parity rows of the cwm family: cwm."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "cwm": [
        ("default", {}),  # layer 0 full, layer 1 sliding (window 8192), llama3 rope
        ("sliding-window-16", dict(sliding_window=16)),
    ],
}
