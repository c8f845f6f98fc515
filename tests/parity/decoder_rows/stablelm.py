"""The text-generation parity rows of the stablelm family: stablelm."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "stablelm": [
        ("default", {}),
        ("qk-layernorm", dict(qk_layernorm=True)),  # one LayerNorm per head
        ("parallel-residual", dict(use_parallel_residual=True)),
        ("qkv-bias", dict(use_qkv_bias=True)),
    ],
}
