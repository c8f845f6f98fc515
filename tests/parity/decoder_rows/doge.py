"""The text-generation parity rows of the doge family: doge."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "doge": [
        ("default", {}),  # dynamic mask (keep_window_size 2048: every key), q/k norms, residual weights, LlamaMLP
        # keep_window_size 24, below the prefill: each query keeps its 24 largest keys; a size at which
        # no two equal keys of layer 0 (a token repeated in the prompt) straddle the boundary:
        # transformers' torch.topk(sorted=False) leaves the order of ties unspecified
        ("keep-24", dict(keep_window_size=24)),
        ("bias", dict(attention_bias=True, mlp_bias=True)),
        ("sliding", dict(sliding_window=16)),
    ],
}
