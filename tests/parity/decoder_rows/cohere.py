"""The text-generation parity rows of the cohere family: cohere, cohere2, cohere2_moe, cohere_compass_text."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "cohere": [
        ("default", {}),  # tied, interleaved rotary
        ("qk-norm", dict(use_qk_norm=True)),  # [heads, head_dim] LayerNorm weights
        ("untied", dict(tie_word_embeddings=False)),
        ("attention-bias", dict(attention_bias=True)),
    ],
    "cohere2": [
        ("default", {}),  # both layers sliding (window 4096) with RoPE
        ("sliding-16-full-layer1", dict(sliding_window=16,
                                        layer_types=["sliding_attention", "full_attention"])),  # no RoPE
    ],
    "cohere2_moe": [
        ("default", {}),  # top-2 logits of 4, softmax over them; no shared experts
        # layer 0 dense (96 wide) full attention with RoPE (force_rope); layer 1 MoE + shared, averaged
        ("dense-prefix-shared-average", dict(first_k_dense_replace=1, num_shared_experts=1,
                                             prefix_dense_intermediate_size=96)),
        ("sigmoid-norm-shared-sum", dict(expert_selection_fn="sigmoid", num_shared_experts=2,
                                         shared_expert_combination_strategy="sum")),
        ("sigmoid-no-norm-rmsnorm", dict(expert_selection_fn="sigmoid", norm_topk_prob=False, rms_norm_eps=1e-6)),
        # layer 0 dense sliding (no force_rope), layer 1 sliding, layer 2 full without RoPE; window 16
        ("prefix-pattern-2-sliding-16", dict(num_hidden_layers=3, first_k_dense_replace=1,
                                             prefix_dense_sliding_window_pattern=2, sliding_window_pattern=2,
                                             sliding_window=16)),
    ],
    "cohere_compass_text": [
        ("default", {}),  # both layers full attention with RoPE (rotation on halves), logit_scale null: 1
        # layer 0 sliding (window 16) with RoPE at theta 500, layer 1 full without (its entry null)
        ("sliding-16-nope-full-scale", dict(layer_types=["sliding_attention", "full_attention"], sliding_window=16,
                                            rope_parameters={"sliding_attention": {"rope_type": "default",
                                                                                   "rope_theta": 500.0},
                                                             "full_attention": None},
                                            logit_scale=0.25)),
    ],
}
