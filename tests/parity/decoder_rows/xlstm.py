"""The text-generation parity rows of xLSTM (src/archs/xlstm.cpp, blocks/mlstm.h): its mLSTM layers
carry the matrix memory C, the normalizer n and the max state m (harness.RECURRENT_STATES); each row
also checks the state handoff (decoder_harness.check_handoff). transformers' reference runs the
prompts' whole chunks of chunk_size (16, decoder_harness.TYPE_BASE) in closed form and the rest token
by token, the graph one Scan over the tokens: the rows compare the two. onnxruntime-genai 0.18 has no
model type that reads these states: built with --runtime none, the default build must refuse it."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "xlstm": [
        # 2 blocks, weight_mode "single"; 4 heads of 16 query/key channels (qk_dim_factor 0.5) and 32
        # value channels; the feed-forward 128 * 2.667 rounded up to 384
        ("default", dict(_runtime="none")),
        # biases (use_bias: the projections', the RMSNorms' and the multi-head norm's); queries / keys
        # wider than values (heads of 32 and 16); the feed-forward 128 * 1.3 rounded up to a multiple
        # of 32 (192); gate and output soft caps low enough to bend the preactivations and the logits.
        # weight_mode "fused" has no row: transformers 5.23 cannot make such a model
        # (xLSTMPreTrainedModel._init_weights subtracts a [2 * num_heads] bias from a [num_heads] one)
        ("bias-caps", dict(use_bias=True, qk_dim_factor=1.0, v_dim_factor=0.5, ffn_proj_factor=1.3,
                           ffn_round_up_to_multiple_of=32, gate_soft_cap=1.0, output_logit_soft_cap=2.0,
                           _runtime="none")),
    ],
}
