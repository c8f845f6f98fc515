"""The text-generation parity rows of the hybrid family: decoders whose layers interleave
self-attention with a state-space mixer (src/blocks/decoder.h DecoderSpec::make_mixer): bamba,
granitemoehybrid.
Attention layers carry key/value, the others {conv_state, recurrent_state}
(harness.HYBRID_STATES); each row also checks the state handoff (decoder_harness.check_handoff)
and generates in onnxruntime-genai 0.18, which reads those states by the names and layer_types of
genai_config.json (src/package/genai_config.cpp)."""

from harness import DROP

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "bamba": [
        # layers mamba, attention, mamba (decoder_harness.TYPE_BASE): 8 heads of 16, 2 groups,
        # state 16, chunks of 16; RoPE on half of each head (BambaConfig's partial_rotary_factor)
        ("default", {}),
        ("attention-first-bias-one-group", dict(attn_layer_indices=[0, 2], mamba_n_groups=1,
                                                 mamba_proj_bias=True, mamba_conv_bias=False,
                                                 attention_bias=True, mamba_d_conv=3)),
        # mamba_d_head left out of config.json: BambaConfig's "auto", 2 * 64 / 4 = 32
        ("d-head-auto-full-rotary", dict(mamba_n_heads=4, mamba_d_head=32, mamba_n_groups=4,
                                         _json=dict(mamba_d_head=DROP),
                                         rope_parameters={"rope_type": "default", "rope_theta": 500.0,
                                                          "partial_rotary_factor": 1.0})),
    ],
    "granitemoehybrid": [
        # layers mamba, attention, mamba (decoder_harness.TYPE_BASE); 4 experts + shared_mlp; no
        # position encoding (position_embedding_type None)
        ("default", {}),
        ("rope-multipliers", dict(position_embedding_type="rope", embedding_multiplier=2.0,
                                  residual_multiplier=0.5, attention_multiplier=0.1, logits_scaling=2.0)),
        # num_local_experts 0: shared_mlp alone; config.json with the legacy layer type names
        ("dense-legacy-layer-types", dict(num_local_experts=0,
                                          layer_types=["full_attention", "linear_attention", "linear_attention"],
                                          _json=dict(layer_types=["attention", "mamba", "mamba"]))),
    ],
}
