"""The text-generation parity rows of the hybrid family: decoders whose layers interleave
self-attention with a state-space mixer (src/blocks/decoder.h DecoderSpec::make_mixer): bamba,
granitemoehybrid, jamba (Mamba-1 mixers), lfm2, lfm2_moe and lfm3 (a short convolution,
src/blocks/short_conv.h; LFM3 with sliding-window attention layers too), nemotron_h (Mamba-2, attention and MLP layers, src/archs/nemotron_h.cpp),
falcon_h1 (attention and Mamba-2 side by side in every layer, src/blocks/parallel_mixers.h: each
layer carries both states; no genai type), zamba and zamba2 (multi-head Mamba or Mamba-2 layers and
shared attention blocks, Zamba2's with low-rank adapters, src/archs/zamba.h: a hybrid layer carries
both states; no genai type), recurrent_gemma (RG-LRU recurrent blocks and local attention,
src/blocks/rg_lru.h; the recurrent states live in transformers' modules, harness.MODULE_STATES),
qwen3_next, qwen3_5_text and qwen3_5_moe_text (gated DeltaNet and gated attention layers,
src/blocks/gated_delta_net.h: {conv_state, recurrent_state}), olmo_hybrid (gated DeltaNet and OLMo 2
attention layers, src/archs/olmo_hybrid.cpp), kimi_linear and bailing_hybrid (Kimi Delta Attention and
MLA layers, src/archs/kimi_linear.cpp), minimax (softmax and lightning attention layers,
src/blocks/lightning_attention.h: {linear_cache}; no genai type), inkling_text (attention with a
relative bias and four short convolutions per layer, src/archs/inkling.cpp; no genai type), qwen4_exp_text
(gated DeltaNet and QSA attention layers over hyper-connection streams, n-gram per-layer embeddings,
src/archs/qwen4_exp.cpp; no genai type), zaya (every layer an attention with its CCA conv window and
delayed value beside the cache, src/archs/zaya.cpp; no genai type).
Attention layers carry key/value, the others {conv_state, recurrent_state} (LFM2's {conv_state})
(harness.HYBRID_STATES); each row also checks the state handoff (decoder_harness.check_handoff)
and generates in onnxruntime-genai 0.18, which reads those states by the names and layer_types of
genai_config.json (src/package/genai_config.cpp; LFM2 as its "lfm2" type); nemotron_h, whose MLP layers
carry no state, has no genai type (_runtime "none": the default build must refuse it)."""

from harness import DROP

NEMOTRON_H_MOE = dict(layers_block_type=["linear_attention", "moe", "full_attention", "moe"], n_routed_experts=4,
                      num_experts_per_tok=2, moe_intermediate_size=32, moe_shared_expert_intermediate_size=48)

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
    "lfm2": [
        # layers conv, attention, conv (decoder_harness.TYPE_BASE); kernel 3, no bias, tied
        ("default", {}),
        # layer_types left out of config.json: Lfm2Config's from full_attn_idxs (attention, conv,
        # attention); the MLP width int(1.5 * 85) = 127 rounded up to 128
        ("bias-kernel-4-attn-idxs-untied", dict(conv_bias=True, conv_L_cache=4, layer_types=None,
                                                full_attn_idxs=[0, 2], block_ffn_dim_multiplier=1.5,
                                                tie_word_embeddings=False, _json=dict(layer_types=DROP))),
        # the MLP width as is (block_auto_adjust_ff_dim false); config.json with the aliases that
        # Lfm2Config pops: block_ff_dim for intermediate_size, tie_embedding for tie_word_embeddings
        ("unadjusted-ff-dim-aliases", dict(block_auto_adjust_ff_dim=False, intermediate_size=96,
                                           tie_word_embeddings=False,
                                           _json=dict(block_ff_dim=96, intermediate_size=DROP,
                                                      tie_embedding=False, tie_word_embeddings=DROP))),
    ],
    "lfm2_moe": [
        # layers conv, attention, conv; layer 0 dense, then 4 experts picked by sigmoid + expert_bias
        ("default", {}),
        # picked by the sigmoid alone, weights not renormalized, scaled by 2; every layer sparse
        ("no-expert-bias-scaled-bias-conv", dict(use_expert_bias=False, norm_topk_prob=False,
                                                 routed_scaling_factor=2.0, num_dense_layers=0,
                                                 conv_bias=True, conv_L_cache=2)),
    ],
    "lfm3": [
        # layers conv, sliding attention (window 4), full attention, conv (decoder_harness.TYPE_BASE):
        # kernel 7, sandwich norms, per-head sigmoid gate; RoPE per layer type as Lfm3Config's
        # default (sliding: default 1e4; full: proportional, half the frequencies, 1e6)
        ("default", {}),
        # layer_types and rope_parameters left out of config.json (Lfm3Config's: conv, conv, full,
        # conv, sliding for 5 layers; its default RoPE), no sandwich norms, no gate, q/k/v/o bias,
        # kernel 3 with bias, untied; rms_norm_eps, the alias of norm_eps
        ("defaults-plain-bias-kernel-3-untied", dict(
            num_hidden_layers=5, layer_types=None, rope_parameters=None, use_sandwich_norm=False,
            use_attention_gate=False, attention_bias=True, conv_L_cache=3, conv_bias=True, tie_word_embeddings=False,
            norm_eps=1e-6, _json=dict(layer_types=DROP, rope_parameters=DROP, norm_eps=DROP, rms_norm_eps=1e-6))),
    ],
    "nemotron_h": [
        # layers mamba, attention, MLP (relu2), mamba (decoder_harness.TYPE_BASE)
        ("default", dict(_runtime="none")),
        # config.json with the legacy hybrid_override_pattern (attention, mamba, MLP, mamba, attention);
        # projections with bias, conv without, one group, kernel 3, multi-head attention;
        # tie_word_embeddings, which NemotronHForCausalLM ignores (no tied weights)
        ("pattern-bias-one-group-kernel-3-tied", dict(
            layers_block_type=["full_attention", "linear_attention", "mlp", "linear_attention", "full_attention"],
            use_bias=True, use_conv_bias=False, mlp_bias=True, n_groups=1, conv_kernel=3, num_key_value_heads=4,
            tie_word_embeddings=True, _runtime="none",
            _json=dict(layers_block_type=DROP, hybrid_override_pattern="*M-M*"))),
        # config.json with the legacy mamba_* names NemotronHConfig pops, over contradicting plain
        # fields (the alias wins); 4 groups, 2 heads of 32, silu MLP
        ("legacy-mamba-aliases-silu-mlp", dict(
            n_groups=4, conv_kernel=2, chunk_size=8, use_conv_bias=False, mlp_hidden_act="silu", mamba_num_heads=4,
            mamba_head_dim=32, _runtime="none",
            _json=dict(n_groups=1, mamba_n_groups=4, conv_kernel=4, mamba_d_conv=2, chunk_size=64,
                       mamba_chunk_size=8, use_conv_bias=True, mamba_conv_bias=False))),
        # layers mamba, MoE, attention, MoE: 4 ungated experts of 32, 2 per token (sigmoid +
        # e_score_correction_bias), shared_experts of 48
        ("moe", dict(_runtime="none", **NEMOTRON_H_MOE)),
        # the experts through a latent of 32 (fc1_latent_proj / fc2_latent_proj, with bias as
        # mlp_bias), 2 groups of 2 experts (1 kept), weights not renormalized, scaled by 2
        ("moe-latent-groups-scaled-bias", dict(_runtime="none", **NEMOTRON_H_MOE, moe_latent_size=32, n_group=2,
                                               topk_group=1, norm_topk_prob=False, routed_scaling_factor=2.0,
                                               mlp_bias=True)),
    ],
    "falcon_h1": [
        # 2 layers, each attention + Mamba-2 side by side (decoder_harness.TYPE_BASE); the gate
        # alone (mamba_rms_norm false), every multiplier 1; no genai type (a layer with both states)
        ("default", dict(_runtime="none")),
        # every µP multiplier; FalconH1RMSNormGated before the gate (mamba_norm_before_gate default)
        ("mup-multipliers-norm-before-gate", dict(
            mamba_rms_norm=True, embedding_multiplier=2.0, lm_head_multiplier=0.5, mlp_multipliers=[0.5, 2.0],
            key_multiplier=0.7, attention_in_multiplier=1.5, attention_out_multiplier=0.8,
            ssm_multipliers=[0.5, 1.5, 0.8, 1.2, 2.0], ssm_in_multiplier=0.7, ssm_out_multiplier=1.3, _runtime="none")),
        # the norm after the gate; mamba_d_ssm null (mamba_expand * hidden_size = 128) and
        # mamba_d_head left out of config.json ("auto": 128 / 4 = 32), one group, kernel 3; every
        # projection with bias (mamba_proj_bias, projectors_bias, attention_bias, mlp_bias), conv without
        ("norm-after-gate-d-ssm-null-bias", dict(
            mamba_rms_norm=True, mamba_norm_before_gate=False, mamba_d_ssm=None, mamba_n_heads=4, mamba_d_head=32,
            mamba_n_groups=1, mamba_d_conv=3, mamba_proj_bias=True, projectors_bias=True, mamba_conv_bias=False,
            attention_bias=True, mlp_bias=True, _runtime="none", _json=dict(mamba_d_head=DROP))),
    ],
    "zamba": [
        # layers mamba, hybrid, mamba, hybrid (decoder_harness.TYPE_BASE): one shared block applied
        # twice; no genai type (a hybrid layer carries both states)
        ("default", dict(_runtime="none")),
        # layers_block_type left out of config.json: ZambaConfig's pattern for 5 layers (period 2,
        # offset 0: mamba, mamba, hybrid, hybrid, mamba); 4 Mamba heads, rank 8, projections with
        # bias, conv without, kernel 3; attention heads of 16 (attention_head_dim); untied
        ("default-pattern-4-heads-bias-kernel-3", dict(
            num_hidden_layers=5, layers_block_type=None, attn_layer_period=2, attn_layer_offset=0, n_mamba_heads=4,
            mamba_dt_rank=8, mamba_proj_bias=True, mamba_conv_bias=False, mamba_d_conv=3, attention_head_dim=16,
            tie_word_embeddings=False, _runtime="none", _json=dict(layers_block_type=DROP))),
    ],
    "zamba2": [
        # layers mamba, hybrid (decoder_harness.TYPE_BASE): the shared block with its MLP adapter; no
        # position encoding; no genai type (a hybrid layer carries both states)
        ("default", dict(_runtime="none")),
        # q/k/v adapters (multi-head: the adapters' outputs are 2 * hidden_size wide), RoPE
        # (use_mem_rope); num_mem_blocks 2 with one application (block 1 never built); one group
        # (two give this model a float32 rounding of 8.7e-5 in transformers' own forward)
        ("attention-adapters-rope", dict(
            num_mem_blocks=2, use_shared_attention_adapter=True, num_key_value_heads=4, use_mem_rope=True,
            mamba_ngroups=1, _runtime="none")),
        # projections with bias (add_bias_linear), untied, one group, kernel 3, tanh GELU;
        # intermediate_size null (4 * hidden_size) and config.json with the legacy layer type "mamba"
        ("bias-untied-legacy-layer-names", dict(
            add_bias_linear=True, tie_word_embeddings=False, mamba_ngroups=1, mamba_d_conv=3,
            hidden_act="gelu_pytorch_tanh", intermediate_size=None, _runtime="none",
            _json=dict(intermediate_size=None, layers_block_type=["mamba", "hybrid"]))),
    ],
    "qwen3_next": [
        # layers DeltaNet, attention (decoder_harness.TYPE_BASE): each value head pair reads one
        # key head; RoPE on a quarter of each head (partial_rotary_factor default 0.25);
        # every layer sparse with the gated shared expert
        ("default", {}),
        # layer_types left out of config.json: Qwen3NextConfig's from full_attention_interval 2
        # (DeltaNet, attention); as many value heads as key heads, kernel 3; attention_bias;
        # layer 0 dense (mlp_only_layers), weights not renormalized; RoPE on half of each head
        ("interval-equal-heads-bias-dense-layer", dict(
            layer_types=None, full_attention_interval=2, linear_num_value_heads=2, linear_conv_kernel_dim=3,
            attention_bias=True, mlp_only_layers=[0], norm_topk_prob=False, partial_rotary_factor=0.5,
            _json=dict(layer_types=DROP, full_attention_interval=2))),
    ],
    "qwen3_5_text": [
        # layers DeltaNet, attention (decoder_harness.TYPE_BASE): the DeltaNet's separate
        # projections; a dense MLP on every layer
        ("default", {}),
        # layer_types from full_attention_interval 2; as many value heads as key heads, kernel 3;
        # attention_bias; tied embeddings; the checkpoints' interleaved M-RoPE sections over RoPE on
        # half of each head (4 frequencies: every section rotates by the text position); the
        # class' rms_norm_eps 1e-6
        ("interval-equal-heads-bias-mrope-tied", dict(
            layer_types=None, full_attention_interval=2, linear_num_value_heads=2, linear_conv_kernel_dim=3,
            attention_bias=True, tie_word_embeddings=True, rms_norm_eps=1e-6,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5,
                             "mrope_section": [2, 1, 1], "mrope_interleaved": True},
            _json=dict(layer_types=DROP, full_attention_interval=2))),
    ],
    "qwen3_5_moe_text": [
        # layers DeltaNet, attention (decoder_harness.TYPE_BASE): the DeltaNet's separate
        # projections; the sparse block with the gated shared expert on every layer, the top-k
        # weights always renormalized (Qwen3_5MoeTopKRouter)
        ("default", {}),
        # layer_types from full_attention_interval 2; as many value heads as key heads, kernel 3;
        # one expert per token; tied embeddings; the class' rms_norm_eps 1e-6
        ("interval-equal-heads-top-1-tied", dict(
            layer_types=None, full_attention_interval=2, linear_num_value_heads=2, linear_conv_kernel_dim=3,
            num_experts_per_tok=1, tie_word_embeddings=True, rms_norm_eps=1e-6,
            _json=dict(layer_types=DROP, full_attention_interval=2))),
    ],
    "qwen4_exp_text": [
        # layers DeltaNet with PLE, QSA attention (decoder_harness.TYPE_BASE); layer_types as the checkpoints
        # spell them ("full_attention": indexed); onnxruntime-genai 0.18 has no qwen4_exp type
        ("default", dict(_runtime="none")),
        # layer_types from full_attention_interval 2; 3 streams; the DeltaNet's sigmoid output gate; 4-grams
        # (a conv dilated by 4 over 3 taps, a context of 3 ids; 12 heads of 4 channels), blocks of 4 keys with a
        # budget of 3 blocks, the table's 12544 rows in 5 shards of torch.chunk's unequal sizes; eos a list; tied
        # embeddings
        ("interval-streams-sigmoid-4grams-blocks-of-4", dict(
            layer_types=None, full_attention_interval=2, hc_count=3, output_gate_type="sigmoid", ngram_size=4,
            ple_conv_kernel_size=3, ple_embed_dim=48, indexer_compress_ratio=4, indexer_budget=12, split_ngram_parts=5,
            eos_token_id=[2, 3], tie_word_embeddings=True, _runtime="none",
            _json=dict(layer_types=DROP, full_attention_interval=2))),
    ],
    "olmo_hybrid": [
        # layers DeltaNet, attention (decoder_harness.TYPE_BASE): value head pairs reading one key
        # head, beta in [0, 2] (linear_allow_neg_eigval default); the attention layer OLMo 2's
        # (post-norms, q/k norms over the whole projection) with RoPE (rope_theta 10000)
        ("default", {}),
        # NoPE as the released checkpoints (rope_theta null: no rotary embedding); layer_types and
        # the key sizes left out of config.json (OlmoHybridConfig's: DeltaNet, attention; 4 key and
        # value heads, keys of int(0.75 * 64 / 4) = 12; values of 12, not the default twice that:
        # decoder_harness.TYPE_BASE); beta in [0, 1]; kernel 3; attention_bias; tied embeddings
        ("nope-default-layer-types-sizes-tied", dict(
            layer_types=None, linear_num_key_heads=None, linear_num_value_heads=None, linear_key_head_dim=None,
            linear_value_head_dim=12, linear_allow_neg_eigval=False, linear_conv_kernel_dim=3, attention_bias=True,
            tie_word_embeddings=True, rope_parameters={"rope_type": "default", "rope_theta": None},
            _json=dict(layer_types=DROP, linear_num_key_heads=DROP, linear_num_value_heads=DROP,
                       linear_key_head_dim=DROP))),
    ],
    "kimi_linear": [
        # layers KDA, MLA (decoder_harness.TYPE_BASE): the per-channel forget gate, q/k/v short
        # convs, the sigmoid-gated output norm; MLA without RoPE (KimiLinearAttention); layer 1 MoE
        # (sigmoid router, one group)
        ("default", {}),
        # config.json as the released checkpoints write it: linear_attn_config (1-based
        # full_attn_layers / kda_layers: MLA, KDA; head_dim, num_heads, short_conv_kernel_size 3)
        # and first_k_dense_replace 0 (both layers MoE) instead of layer_types / mlp_layer_types,
        # the attribute_map names (num_experts, num_experts_per_token, num_expert_group,
        # moe_renormalize false); q through q_lora_rank; 2 groups of 2 experts, 1 kept
        ("released-config-q-lora-groups", dict(
            layer_types=["full_attention", "linear_attention"], mlp_layer_types=["sparse", "sparse"],
            linear_conv_kernel_dim=3, q_lora_rank=32, n_group=2, topk_group=1, norm_topk_prob=False,
            _json=dict(layer_types=DROP, mlp_layer_types=DROP, linear_head_dim=DROP, linear_num_heads=DROP,
                       linear_conv_kernel_dim=DROP, first_k_dense_replace=0,
                       linear_attn_config={"full_attn_layers": [1], "kda_layers": [2], "head_dim": 8,
                                           "num_heads": 2, "short_conv_kernel_size": 3}))),
    ],
    "bailing_hybrid": [
        # layers KDA, gated MLA (decoder_harness.TYPE_BASE, layer_group_size 2): the bounded forget
        # gate (kda_safe_gate), f_proj / g_proj, q/k/v short convs; MLA through q_proj with
        # interleaved RoPE (rope_theta 6e6) and the per-head sigmoid gate; layer 1 MoE (sigmoid
        # router, one group)
        ("default", {}),
        # the unbounded forget gate (-exp(A_log) softplus); the layer plans and KDA sizes from the
        # config class' pattern (layer_group_size 2, first_k_dense_replace 0: both layers MoE,
        # head_dim, short_conv_kernel_size 3) instead of the saved layer_types / mlp_layer_types /
        # linear_*; 2 groups of 2 experts, 1 kept, moe_renormalize false; a yarn rope (its mscale in
        # the softmax scale)
        ("softplus-gate-class-pattern-groups-yarn", dict(
            kda_safe_gate=False, short_conv_kernel_size=3, first_k_dense_replace=0, n_group=2, topk_group=1,
            norm_topk_prob=False,
            rope_parameters={"rope_type": "yarn", "rope_theta": 6000000.0, "factor": 2.0, "mscale_all_dim": 1.0,
                             "original_max_position_embeddings": 256},
            _json=dict(layer_types=DROP, mlp_layer_types=DROP, linear_head_dim=DROP, linear_num_heads=DROP,
                       linear_conv_kernel_dim=DROP))),
    ],
    # four short-convolution states beside each layer's cache: no genai model type
    "inkling_text": [
        ("default", dict(_runtime="none")),  # sliding then full layer, layer 1 MoE (decoder_harness.TYPE_BASE)
        # full then sliding layer, both MoE with two shared experts in the softmax; no logit scaling
        ("full-first-two-shared", dict(layer_types=["hybrid", "hybrid_sliding"], mlp_layer_types=["sparse", "sparse"],
                                       n_shared_experts=2, log_scaling_n_floor=None, _runtime="none")),
    ],
    "minimax": [
        # layers attention, lightning attention (decoder_harness.TYPE_BASE); every residual weight
        # 1; transformers' prefill in one block of 256
        ("default", dict(_runtime="none")),
        # layers attention, lightning, lightning: the lightning slopes at layer factors 0.5 and near 0
        # (1 - 2 / (2 + 1e-5) + 1e-5); heads of 32 (the lightning width 128, not hidden_size); the
        # MiniMax-Text-01 style residual weights, each its own value; the attention layer sliding
        # over 16 positions; transformers' prefill in blocks of 8 (block_size, which mobius does not
        # read: its closed form is exact for any block). Not a lightning layer 0 (MiniMax-Text-01's
        # pattern): transformers 5.23's cached step then takes the sequence length from layer 0's
        # empty DynamicLayer in MiniMaxCache (find_first_full_attention_index: its layers are never
        # linear), so its decode mask drops the padding and the window (0.51 off its own uncached
        # forward on the padded row, which mobius' decode equals to 9.4e-7)
        ("lightning-pair-head-32-weighted-sliding-block-8", dict(
            num_hidden_layers=3, layer_types=["full_attention", "linear_attention", "linear_attention"], head_dim=32,
            full_attn_alpha_factor=1.5, full_attn_beta_factor=0.5, linear_attn_alpha_factor=0.8,
            linear_attn_beta_factor=1.2, mlp_alpha_factor=1.1, mlp_beta_factor=0.9, sliding_window=16, block_size=8,
            _runtime="none")),
    ],
    "recurrent_gemma": [
        ("default", {}),
        # layers recurrent, attention (block_types of 2); lru_width 96 (not hidden_size: heads of
        # 24), conv1d_width 2, q/k/v biases, one KV head, RoPE over the whole head, a soft cap of 5,
        # untied. No attention layer before a recurrent one: there transformers' padded row differs
        # (its fully masked padding queries' attention output reaches the next conv1d window)
        ("lru-96-kernel-2-bias", dict(
            num_hidden_layers=2, block_types=["recurrent", "attention"], lru_width=96, conv1d_width=2, attention_bias=True,
            num_key_value_heads=1, rope_parameters={"rope_type": "default", "rope_theta": 500.0,
                                                    "partial_rotary_factor": 1.0},
            logits_soft_cap=5.0, tie_word_embeddings=False)),
        # hidden_size 48: the embedding normalizer sqrt(48) = 6.93 is the bfloat16 6.9375; heads of
        # 12; config.json with the alias sliding_window (a window of 8) for attention_window_size;
        # erf GELU
        ("hidden-48-window-alias-gelu", dict(
            hidden_size=48, attention_window_size=8, hidden_activation="gelu",
            _json=dict(sliding_window=8, attention_window_size=DROP))),
    ],
    "jamba": [
        # layers mamba (MoE), attention (MLP), mamba (MoE) (decoder_harness.TYPE_BASE)
        ("default", {}),
        # the experts on the attention layer; a wider time step, projections with bias, kernel 3
        ("moe-on-attention-rank-8-bias-kernel-3", dict(expert_layer_offset=1, mamba_dt_rank=8,
                                                       mamba_proj_bias=True, mamba_conv_bias=False,
                                                       mamba_d_conv=3)),
        # one expert: JambaMLP on every layer; mamba_dt_rank "auto" (ceil(64 / 16) = 4), expand 1
        ("dense-auto-rank-expand-1", dict(num_experts=1, mamba_expand=1, tie_word_embeddings=True,
                                          _json=dict(mamba_dt_rank="auto"))),
    ],
    "zaya": [
        # layers hybrid, hybrid (decoder_harness.TYPE_BASE): CCA kernels 2 and 2 (a window of 2),
        # config.json without rope_parameters: ZayaConfig.__post_init__'s (theta 5e6, half of each head
        # rotated); tied
        ("default", dict(_runtime="none", _json=dict(rope_parameters=DROP))),
        # a sliding layer (window 16) before a full one, each with its own rope_parameters; one KV head
        # (groups of 4 query heads); kernels 3 and 2 (a window of 3); q / k / v / o biases (the
        # first delayed value is v_proj_delayed's bias); untied with an LM head bias
        ("sliding-one-kv-head-kernel-3-bias-untied", dict(
            layer_types=["hybrid_sliding", "hybrid"], sliding_window=16, num_key_value_heads=1, cca_time0=3,
            attention_bias=True, tie_word_embeddings=False, lm_head_bias=True,
            rope_parameters={"hybrid": {"rope_type": "default", "rope_theta": 20000.0, "partial_rotary_factor": 0.25},
                             "hybrid_sliding": {"rope_type": "default", "rope_theta": 500.0,
                                                "partial_rotary_factor": 1.0}},
            _runtime="none")),
    ],
}
