"""The text-generation parity rows of the kolibri1 family: kolibri1."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "kolibri1": [
        ("default", {}),  # sliding layer with RoPE, full layer NoPE; top-2 of logits + correction, sigmoid weights
        # the class' layer_types (both layers sliding, RoPE); the picked sigmoid weights renormalized
        ("class-layer-types-norm-topk", dict(layer_types=None, norm_topk_prob=True)),
    ],
}
