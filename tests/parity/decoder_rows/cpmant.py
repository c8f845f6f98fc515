"""The text-generation parity rows of the cpmant family: cpmant."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "cpmant": [
        # 4 prompt tokens ahead of the text, 32 position buckets (log-spaced beyond distance 8, up to
        # 64), segment buckets between the prompt and the text
        ("default", dict(_runtime="none")),
        # dim_head apart from hidden_size / heads, more segment types (the segment rows' stride),
        # another eps and a longer prompt
        ("dim-head-24-segments-5-prompt-6", dict(dim_head=24, segment_types=5, prompt_length=6, prompt_types=4,
                                                 eps=1e-5, _runtime="none")),
    ],
}
