"""The text-generation parity rows of the hunyuan_v1_dense family: hunyuan_v1_dense."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "hunyuan_v1_dense": [
        ("default", {}),  # q/k norm after rope
        ("attention-bias", dict(attention_bias=True)),
        ("ntk-alpha", dict(rope_parameters=dict(rope_type="dynamic", alpha=1000.0, factor=1.0,
                                                rope_theta=10000.0))),
    ],
}
