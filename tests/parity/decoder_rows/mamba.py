"""The text-generation parity rows of the mamba family (selective state-space models,
src/blocks/mamba.h, mamba2.h): mamba, falcon_mamba, mamba2. Their layers carry {conv_state, recurrent_state}
(harness.RECURRENT_STATES); each row also checks the state handoff (decoder_harness.check_handoff).
They generate in onnxruntime-genai 0.18 as its generic "decoder" type, which reads those states by
the names and layer_types (all "linear_attention") of genai_config.json (src/package/genai_config.cpp)."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "mamba": [
        ("default", {}),  # expand 2 (128 channels), state_size 16, conv_kernel 4, time_step_rank auto (4)
        ("bias-no-conv-bias", dict(use_bias=True, use_conv_bias=False)),
        ("rank-8-state-8-kernel-2-untied", dict(time_step_rank=8, state_size=8, conv_kernel=2, expand=1,
                                           tie_word_embeddings=False)),
    ],
    "falcon_mamba": [
        ("default", {}),  # dt, B, C RMS-normalized, mixer_rms_eps 1e-6
        ("rms-eps-0.5", dict(mixer_rms_eps=0.5)),  # large enough to change the norms
    ],
    "mamba2": [
        # 8 heads of 16 (hidden_size * expand = 128), 2 groups of B and C, state_size 16
        # (decoder_harness.TYPE_BASE)
        ("default", {}),
        ("groups-per-head-bias-tied", dict(n_groups=8, use_bias=True, use_conv_bias=False,
                                     tie_word_embeddings=True)),
        ("one-group-kernel-3", dict(num_heads=4, head_dim=32, n_groups=1, conv_kernel=3)),
    ],
}
