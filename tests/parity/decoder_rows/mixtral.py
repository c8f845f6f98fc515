"""The text-generation parity rows of the mixtral family: mixtral, qwen2_moe, qwen3_moe, aria_text, olmoe, phimoe, granitemoe,
granitemoeshared, granitemoe_swa."""

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "mixtral": [
        ("default", {}),  # softmax top-2 of 4, renormalized
        ("top-3-of-8", dict(num_local_experts=8, num_experts_per_tok=3)),
        ("sliding-window-16", dict(sliding_window=16)),
        ("tied", dict(tie_word_embeddings=True)),
    ],
    "qwen2_moe": [
        ("default", {}),  # shared expert with sigmoid gate, top-k not renormalized, q/k/v bias
        ("norm-topk", dict(norm_topk_prob=True)),
        ("mlp-only-layer-0", dict(mlp_only_layers=[0])),
        ("sparse-step-2", dict(decoder_sparse_step=2)),  # layer 0 dense
        ("sliding-window-layer0", dict(use_sliding_window=True, sliding_window=16, max_window_layers=1)),
    ],
    "qwen3_moe": [
        ("default", {}),  # per-head q/k norm, top-k not renormalized
        ("norm-topk", dict(norm_topk_prob=True)),
        ("mlp-only-layer-1", dict(mlp_only_layers=[1])),
        ("sliding-window-16", dict(use_sliding_window=True, sliding_window=16)),
    ],
    "aria_text": [
        ("default", {}),  # top-2 of 4 logits then softmax, stacked [E, in, out] experts, 2 shared experts
        # the shared experts take hidden_act and mlp_bias, the routed ones stay SiLU without bias
        ("one-shared-gelu-bias", dict(moe_num_shared_experts=1, hidden_act="gelu", mlp_bias=True)),
    ],
    "olmoe": [
        ("default", {}),  # q/k norm over the whole projection
        ("norm-topk", dict(norm_topk_prob=True)),
        ("clip-qkv", dict(clip_qkv=1.0)),
    ],
    "phimoe": [
        ("default", {}),  # sparsemixer, router_jitter_noise 0.01; LayerNorm
        ("jitter-0.3", dict(router_jitter_noise=0.3)),  # threshold 0.6: several logits share the softmax
        ("bias", dict(attention_bias=True, lm_head_bias=True)),
        ("sliding-window-16", dict(sliding_window=16)),
    ],
    "granitemoe": [
        ("default", {}),  # top-k logits then softmax, stacked input_linear / output_linear
        ("multipliers", dict(embedding_multiplier=2.0, residual_multiplier=0.5,
                             attention_multiplier=0.2, logits_scaling=3.0)),
        ("attention-bias", dict(attention_bias=True)),
    ],
    "granitemoeshared": [
        ("default", dict(shared_intermediate_size=48)),  # + shared_mlp (input_linear chunked gate | up)
        ("no-shared-mlp", dict(shared_intermediate_size=0)),  # the class default: GraniteMoe's layers
        ("multipliers", dict(shared_intermediate_size=32, embedding_multiplier=2.0, residual_multiplier=0.5,
                             attention_multiplier=0.2, logits_scaling=3.0)),
    ],
    "granitemoe_swa": [
        ("default", dict(shared_intermediate_size=48)),  # granitemoeshared + sinks, layer 1 sliding (16)
        ("no-shared-mlp-nope", dict(shared_intermediate_size=0, layer_rope_theta=[0.0, 10000.0])),
        ("multipliers", dict(shared_intermediate_size=32, embedding_multiplier=2.0, residual_multiplier=0.5,
                             attention_multiplier=0.2, logits_scaling=3.0)),
    ],
}
