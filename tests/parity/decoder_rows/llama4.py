"""The text-generation parity rows of the llama4 family: llama4_text."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "llama4_text": [
        # chunked RoPE layers with L2 q/k norms, NoPE full layers with temperature tuning, sigmoid
        # top-2 routing that scales the experts' inputs, shared expert
        ("default", {}),
        # layers 1 and 3 MoE, 0 and 2 the dense MLP; no q/k norm, no temperature tuning, bias
        ("interleaved-moe-no-qk-norm-bias", dict(interleave_moe_layer_step=2, use_qk_norm=False,
                                                 attn_temperature_tuning=False, attention_bias=True)),
        # top-1 routing as the released models; llama3 RoPE scaling (Llama-4-Scout's rope_type)
        ("top1-llama3-rope", dict(num_experts_per_tok=1, rope_parameters=dict(
            rope_type="llama3", rope_theta=500000.0, factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
            original_max_position_embeddings=32))),
    ],
}
