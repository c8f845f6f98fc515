"""The text-generation parity rows of the ministral3 family: ministral3."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "ministral3": [
        ("default", {}),  # yarn, original 16384: llama_4 scaling 1 at these positions
        ("llama4-scaling", dict(rope_parameters=dict(
            rope_type="yarn", rope_theta=1000000.0, factor=4.0, original_max_position_embeddings=32,
            beta_fast=32.0, beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0, llama_4_scaling_beta=0.1))),
        ("sliding-window-16", dict(sliding_window=16)),
    ],
}
