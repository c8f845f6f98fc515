"""The text-generation parity rows of the flint family: flint."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "flint": [
        ("default", {}),  # sinks, q/k norms, RoPE on the sliding layer; sigmoid top-2 renormalized + shared expert
        ("no-norm-topk-bias", dict(norm_topk_prob=False, attention_bias=True)),
    ],
}
