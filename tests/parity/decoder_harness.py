"""Task text-generation: the decoder parity rows (typed, harness.Row) and their runner: a padded
batch prefill, a decode step on the cache, 24 greedy tokens through onnxruntime and
onnxruntime-genai (run_parity). The shared core (checkpoint, build, onnxruntime session, OnnxLM,
checker, row recording) is harness.py; test_decoder_parity.py, test_ep_lowering.py, test_dtypes.py,
test_quantized.py run these rows."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import torch

import harness as H
from decoder_rows import VARIANTS
from decoder_rows.shared import LONG, SHORT  # noqa: F401 - test_config_fidelity's longrope rows
from harness import GEN_NEW, GEN_PROMPT, TOL, Row

# ---------------------------------------------------------------------------------------------
# The rows: per family in decoder_rows/; here the tiny sizes every row of a type starts from.
# ---------------------------------------------------------------------------------------------
BASE = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            vocab_size=256, intermediate_size=128, max_position_embeddings=512,
            bos_token_id=1, eos_token_id=2)  # genai_config.json needs an eos (genai stops there)
TYPE_BASE = {
    "qwen3": dict(head_dim=16),  # Qwen3Config defaults head_dim to 128
    "phi3": dict(pad_token_id=None),  # Phi3Config: 32000, outside the vocabulary
    "glm": dict(head_dim=16, pad_token_id=None), "glm4": dict(head_dim=16, pad_token_id=None),  # 128, 151329
    # rotary_dim 8 of head size 16 (default 64); n_inner: the MLP width (intermediate_size)
    "gptj": dict(rotary_dim=8, n_inner=128), "codegen": dict(rotary_dim=8, n_inner=128),
    "gpt2": dict(n_inner=128), "gpt_bigcode": dict(n_inner=128),
    "gpt_neo": dict(attention_types=[[["global", "local"], 1]], window_size=16),
    "opt": dict(ffn_dim=128), "falcon": dict(ffn_hidden_size=128),
    "xglm": dict(ffn_dim=128), "ctrl": dict(dff=128),  # XGLMConfig 4096, CTRLConfig 8192
    # CpmAntConfig: dim_head 128, dim_ff 10240, 32 prompt tokens, 512 buckets up to 2048, 32 segment
    # types; vocab 260: the harness' random texts (seeds 1-3) hold no id 0, which CPM-Ant reads as padding
    "cpmant": dict(vocab_size=260, dim_head=16, dim_ff=128, prompt_length=4, prompt_types=3, segment_types=3,
                   position_bias_num_buckets=32, position_bias_max_distance=64),
    # the Gemma configs default head_dim to 256; query_pre_attn_scalar (default 256) differs from
    # head_dim so that scale = query_pre_attn_scalar**-0.5 is tested
    "gemma": dict(head_dim=16),
    "gemma2": dict(head_dim=16, query_pre_attn_scalar=24),
    "gemma3_text": dict(head_dim=16, query_pre_attn_scalar=24),
    "vaultgemma": dict(head_dim=16, query_pre_attn_scalar=24),
    "gemma4_text": dict(num_hidden_layers=4, head_dim=16, global_head_dim=32, sliding_window=16,
                        layer_types=["sliding_attention", "full_attention"] * 2, hidden_size_per_layer_input=8,
                        vocab_size_per_layer_input=256, num_kv_shared_layers=2),
    # Gemma 4 unified: the same without per-layer inputs (its config class has none)
    "gemma4_unified_text": dict(num_hidden_layers=4, head_dim=16, global_head_dim=32, sliding_window=16,
                                layer_types=["sliding_attention", "full_attention"] * 2, num_kv_shared_layers=2),
    # Gemma 3n: layers sliding, full, sliding, full, the last 2 reusing the caches of layers 0 and 1;
    # 4 AltUp streams; per-layer inputs of 8 from a table of 200 rows (ids 200-255 read row 0);
    # Laurel rank 8; the gaussian top-k on the first two layers' gates
    "gemma3n_text": dict(num_hidden_layers=4, head_dim=16, sliding_window=16,
                         layer_types=["sliding_attention", "full_attention"] * 2, hidden_size_per_layer_input=8,
                         vocab_size_per_layer_input=200, num_kv_shared_layers=2, laurel_rank=8,
                         activation_sparsity_pattern=[0.95, 0.95, 0.0, 0.0]),
    "smollm3": dict(pad_token_id=None),  # SmolLM3Config: 128004, outside the vocabulary
    # Mamba2Config: num_heads * head_dim must equal hidden_size * expand (128); its default
    # time_step_limit (0, inf) is saved as [0.0, {"__float__": "Infinity"}], which transformers
    # 5.23 refuses to load again: a finite bound that no dt reaches; chunks of 16 tokens, so that a
    # prompt spans several and the state handoff's chunks end inside one (default 256)
    "mamba2": dict(num_heads=8, head_dim=16, n_groups=2, state_size=16, time_step_limit=[0.0, 1000.0],
                   chunk_size=16),
    # Bamba: layers mamba, attention, mamba; the Mamba-2 mixers as mamba2's (8 heads of 16, 2
    # groups, state 16, chunks of 16, a finite time_step_limit)
    "bamba": dict(num_hidden_layers=3, attn_layer_indices=[1], mamba_n_heads=8, mamba_d_head=16, mamba_n_groups=2,
                  mamba_d_state=16, mamba_chunk_size=16, time_step_limit=[0.0, 1000.0]),
}
# GraniteMoeHybrid: Bamba's Mamba-2 sizes, layers mamba, attention, mamba; 4 experts, 2 per token
TYPE_BASE["granitemoehybrid"] = dict({k: v for k, v in TYPE_BASE["bamba"].items() if k != "attn_layer_indices"},
                                     layer_types=["linear_attention", "full_attention", "linear_attention"],
                                     num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=96)
# LFM2: layers conv, attention, conv; the MLP width int(2 * 128 / 3) = 85 rounded up to a multiple
# of 32 (96; default 256)
TYPE_BASE["lfm2"] = dict(num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"], block_multiple_of=32)
# LFM2-MoE: the same layers; layer 0 dense, 4 experts of 32, 2 per token
TYPE_BASE["lfm2_moe"] = dict(num_hidden_layers=3, layer_types=["conv", "full_attention", "conv"], num_dense_layers=1,
                             num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32)
# LFM3: layers conv, sliding attention, full attention, conv (window 4, so the prompts slide);
# heads of 16 (LFM3's head_dim default 128); Lfm3Config's pad_token_id 124893 is outside the vocabulary
TYPE_BASE["lfm3"] = dict(num_hidden_layers=4, layer_types=["conv", "sliding_attention", "full_attention", "conv"],
                         head_dim=16, num_key_value_heads=2, sliding_window=4, pad_token_id=None)
# Jamba: layers mamba, attention, mamba (attn_layer_period 3, offset 1); 4 experts, 2 per token, on
# layers 0 and 2 (expert_layer_period 2, offset 0); the Mamba mixers of 128 channels, state 16
TYPE_BASE["jamba"] = dict(num_hidden_layers=3, attn_layer_period=3, attn_layer_offset=1, expert_layer_period=2,
                          expert_layer_offset=0, num_experts=4, num_experts_per_tok=2, mamba_d_state=16)
# Nemotron-H: layers mamba, attention, MLP, mamba (num_hidden_layers is the list's length); the
# Mamba-2 mixers of 8 heads of 16, 2 groups, state 16, chunks of 16; attention heads of 16; a finite
# time_step_limit as mamba2's (the model does not read it: its mixers clamp at time_step_min)
TYPE_BASE["nemotron_h"] = dict(layers_block_type=["linear_attention", "full_attention", "mlp", "linear_attention"],
                               head_dim=16, mamba_num_heads=8, mamba_head_dim=16, n_groups=2, ssm_state_size=16,
                               chunk_size=16, time_step_limit=[0.0, 1000.0])
# Falcon-H1: attention and Mamba-2 side by side in each of 2 layers; the Mamba-2 mixers of 8 heads
# of 16 (mamba_d_ssm 128; default 1024), 2 groups, state 16, chunks of 16, a finite time_step_limit
TYPE_BASE["falcon_h1"] = dict(mamba_d_ssm=128, mamba_n_heads=8, mamba_d_head=16, mamba_n_groups=2, mamba_d_state=16,
                              mamba_chunk_size=16, time_step_limit=[0.0, 1000.0])
# Zamba2: layers mamba, hybrid: the shared block (attention of 4 heads of 2 * 64 / 4 = 32, 2 KV
# heads; its MLP's low-rank adapter of rank 8); the Mamba-2 mixers of 8 heads of 16, 2 groups,
# state 16, chunks of 16. Two layers: with a second application of the block the tiny random model
# is ill-conditioned in float32 (transformers' own float32 forward is 1.5e-4 to 4.5e-4 off its
# float64 one: the Mamba-2 mixers' grouped gated norm amplifies the first application's rounding)
TYPE_BASE["zamba2"] = dict(num_hidden_layers=2, layers_block_type=["linear_attention", "hybrid"],
                           n_mamba_heads=8, mamba_ngroups=2, mamba_d_state=16, chunk_size=16, adapter_rank=8)
# Zamba: layers mamba, hybrid, mamba, hybrid: one shared block (attention of 4 heads of 2 * 64 / 4
# = 32, 2 KV heads); the multi-head Mamba mixers of 2 heads of 64 channels, state 16
TYPE_BASE["zamba"] = dict(num_hidden_layers=4,
                          layers_block_type=["linear_attention", "hybrid", "linear_attention", "hybrid"])
# Qwen3-Next: layers gated DeltaNet, attention; attention heads of 16 (default 256); the DeltaNet's
# 2 key heads of 8 and 4 value heads of 16 (a state [key dim, value dim] read transposed cannot
# pass), kernel 4; 4 experts of 32, 2 per token, and a shared expert of 48 on every layer.
# Two layers, keys of 8: with a second DeltaNet after the attention (keys of 16) the tiny random
# model is ill-conditioned in float32: transformers' own float32 forward, its embeddings perturbed
# by one float32 rounding (x(1 + 1.2e-7 noise), 5 draws), is 1.1e-4 to 1.3e-3 off its float64
# one on the state-handoff prompt (qwen3_5_text: 1.5e-4 on the padded batch): the gated RMSNorm
# after the delta rule scales a value head's output by 1 / its RMS, and the head whose queries
# are nearly orthogonal to all keys has an RMS ~5e-4. With two layers and keys of 8 the same
# perturbations stay within 6.6e-5 on every row (keys of 16: 1.0e-4)
TYPE_BASE["qwen3_next"] = dict(num_hidden_layers=2, layer_types=["linear_attention", "full_attention"],
                               head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=8,
                               linear_value_head_dim=16, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                               shared_expert_intermediate_size=48)
# Qwen3.5 text: Qwen3-Next's layers and sizes, a dense MLP on every layer
TYPE_BASE["qwen3_5_text"] = {k: v for k, v in TYPE_BASE["qwen3_next"].items()
                             if k not in ("num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                          "shared_expert_intermediate_size")}
# Qwen3.5-MoE text: Qwen3.5's layers and sizes, Qwen3-Next's experts on every layer (no dense MLP)
TYPE_BASE["qwen3_5_moe_text"] = dict(TYPE_BASE["qwen3_next"])
# Both Qwen3.5 types: rms_norm_eps 1e-4 (default 1e-6; their second rows keep 1e-6). The DeltaNet's
# gated RMSNorm divides each value head's output by its RMS, ~5e-4 on the head whose queries are
# nearly orthogonal to the keys, which scales float32 rounding up by ~2000: with 1e-6 the default
# rows' prefill was 5.03e-5 off the float64 reference (margin 0.50, both types), with 1e-4
# 1.59e-5 / 2.87e-5. The same graph, a different config value.
for _t in ("qwen3_5_text", "qwen3_5_moe_text"):
    TYPE_BASE[_t] = dict(TYPE_BASE[_t], rms_norm_eps=1e-4)
# Qwen4-Exp text: Qwen3.5-MoE's layers, sizes and rms_norm_eps; the attention layer under the QSA indexer (8
# heads of 16; blocks of 2 keys, a budget of 2 blocks: the 48-token prefill keeps 4 of up to 48 keys plus the tail;
# 8 heads make a tie of two blocks all of whose head scores relu drops to 0 unlikely); 2 residual streams, mixer
# rank 16; PLE on layer 1 (the DeltaNet): trigrams, 4 heads per order of 8 channels from primes after 1000
# (8320 rows, 4 shards), eos 2 breaking the n-grams (the padded row's padding reads as eos)
TYPE_BASE["qwen4_exp_text"] = dict(TYPE_BASE["qwen3_5_moe_text"], indexer_n_heads=8, indexer_kv_heads=1,
                                   indexer_head_dim=16, indexer_budget=4, indexer_compress_ratio=2, hc_count=2,
                                   hc_lowrank=16, ple_layer_ids=[1], ple_embed_dim=64, heads_per_ngram=4,
                                   ngram_vocab_size_base=1000, split_ngram_parts=4)
# OLMo-Hybrid: layers gated DeltaNet, attention (OLMo 2's post-norm layer); the DeltaNet's 2 key
# heads of 8 and 4 value heads of 4 (a state [key dim, value dim] read transposed cannot pass).
# As many key as value channels (16): transformers 5.23 saves the q/k/v convs (q_conv1d, k_conv1d,
# v_conv1d, conversion_mapping.py) by cutting its concatenated conv1d into three equal parts, which
# are the q/k/v sizes (those of the released checkpoints, which mobius reads) only then.
# OlmoHybridConfig's pad token 100277 lies outside the vocabulary
TYPE_BASE["olmo_hybrid"] = dict(layer_types=["linear_attention", "full_attention"], linear_num_key_heads=2,
                                linear_num_value_heads=4, linear_key_head_dim=8, linear_value_head_dim=4,
                                pad_token_id=None)
# Kimi Linear: layers Kimi Delta Attention, MLA (NoPE); the KDA's 2 heads of 8 (a per-channel forget
# gate over each head's 8 key channels), kernel 4; MLA as DeepSeek's rows (heads of 16 + 8, values of
# 24 so that onnxruntime-genai can run it; num_key_value_heads = heads); layer 0 dense (the config's
# first_k_dense_replace default 1), layer 1 4 experts of 32, 2 per token, one shared expert.
# KimiLinearConfig's pad token 163839 lies outside the vocabulary
TYPE_BASE["kimi_linear"] = dict(layer_types=["linear_attention", "full_attention"], linear_num_heads=2,
                                linear_head_dim=8, num_key_value_heads=4, kv_lora_rank=16, qk_nope_head_dim=16,
                                qk_rope_head_dim=8, v_head_dim=24, num_local_experts=4, num_experts_per_tok=2,
                                moe_intermediate_size=32, pad_token_id=None)
# Ling 3.0 (bailing_hybrid): layers KDA, MLA (layer_group_size 2); the KDA's 4 heads
# (num_attention_heads) of 8 (head_dim), kernel 4; MLA as Kimi Linear's rows with RoPE over 8
# channels; layer 0 dense (first_k_dense_replace 1), layer 1 4 experts of 32 in one group, 2 per
# token, one shared expert. BailingHybridConfig's pad token 156892 lies outside the vocabulary
TYPE_BASE["bailing_hybrid"] = dict(layer_group_size=2, head_dim=8, num_key_value_heads=4, kv_lora_rank=16,
                                   qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=24, num_local_experts=4,
                                   num_experts_per_tok=2, n_group=1, topk_group=1, moe_intermediate_size=32,
                                   first_k_dense_replace=1, pad_token_id=None)
# MiniMax: layers attention, lightning attention (MiniMaxConfig's default pattern); 4 heads of 16
# (the lightning state [16, 16] per head); 4 experts, 2 per token
TYPE_BASE["minimax"] = dict(num_local_experts=4, num_experts_per_tok=2)
# Inkling: layers sliding (window 16, 4 heads of 8 = swa_*), full (4 heads of 16, 2 kv heads); the
# relative bias over 8 profiles (d_rel) reaching 32 positions back on the full layer (rel_extent, below
# the prefill), its logit scaling from position 8 (log_scaling_n_floor); layer 0 dense, layer 1 MoE:
# 4 experts of 32, 2 per token, one shared expert in the softmax; short convolutions of 4 taps
TYPE_BASE["inkling_text"] = dict(head_dim=16, swa_num_attention_heads=4, swa_num_key_value_heads=4, swa_head_dim=8,
                                 sliding_window_size=16, d_rel=8, rel_extent=32, log_scaling_n_floor=8,
                                 layer_types=["hybrid_sliding", "hybrid"], mlp_layer_types=["dense", "sparse"],
                                 moe_intermediate_size=32, n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1)
# RecurrentGemma: layers recurrent, recurrent, attention (block_types' default); the attention sees
# the last 16 positions (attention_window_size, default 2048: below the prefill and crossed by the
# greedy tokens); the RG-LRU blocks of lru_width 64 (hidden_size) in 4 heads, conv1d_width 4
TYPE_BASE["recurrent_gemma"] = dict(num_hidden_layers=3, attention_window_size=16)
# RWKV-4: 3 layers (hidden 64, channel mix 128)
TYPE_BASE["rwkv"] = dict(num_hidden_layers=3)
# xLSTM: 2 blocks of hidden 128 in 4 heads (num_heads; default 8): int(128 * qk_dim_factor) equals
# xLSTMConfig.qk_dim (rounded up to a multiple of 64), which sizes xLSTMCache (a hidden of 64 would
# give the layers 32 query channels and the cache 64); chunks of 16 (default 64, above the prefill),
# so that transformers runs the prompts' whole chunks in closed form and the rest token by token
TYPE_BASE["xlstm"] = dict(hidden_size=128, num_heads=4, chunk_size=16)
# ZAYA1: 2 layers, 4 heads of 16 (ZayaConfig's head_dim 128), 2 KV heads; 4 experts of 48 and the
# skip expert behind a router of 32 (num_experts_per_tok 1: ZayaConfig accepts no other)
TYPE_BASE["zaya"] = dict(head_dim=16, num_experts=4, num_experts_per_tok=1, moe_intermediate_size=48,
                         router_hidden_size=32)
# Config classes whose head_dim defaults to a full-size value (128) or to None without a fallback
TYPE_BASE.update({t: dict(head_dim=16) for t in (
    "cwm", "ernie4_5", "helium", "hunyuan_v1_dense", "internlm3", "iquestcoder", "ministral",
    "ministral3", "seed_oss")})
# Mixture-of-experts types: >= 4 experts, >= 2 per token (the harness checks that the routers pick
# more than one expert on the prompt); DeepSeek's MLA needs num_key_value_heads == heads.
# v_head_dim equals the qk head size (16 + 8) so that onnxruntime-genai can run the package; the
# v-head-dim-12 rows cover a narrower value cache (as in the real DeepSeek-V2/V3), which genai cannot.
MLA = dict(num_key_value_heads=4, q_lora_rank=32, kv_lora_rank=16, qk_nope_head_dim=16,
           qk_rope_head_dim=8, v_head_dim=24, n_routed_experts=8, num_experts_per_tok=2,
           moe_intermediate_size=32, n_shared_experts=1, first_k_dense_replace=1)
DEEPSEEK_MOE = dict(n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=32, n_shared_experts=1,
                    first_k_dense_replace=1, n_group=4, topk_group=2)
TYPE_BASE.update({
    "mixtral": dict(num_local_experts=4, num_experts_per_tok=2),
    "qwen2_moe": dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                      shared_expert_intermediate_size=96),
    "qwen3_moe": dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32),
    "aria_text": dict(moe_num_experts=4, moe_topk=2),
    # d_model itself: DbrxConfig.__post_init__ sizes ffn_config from d_model before BASE's
    # hidden_size (its attribute_map alias) is applied, which leaves the experts 2048 wide
    "dbrx": dict(d_model=64, attn_config=dict(kv_n_heads=2, rope_theta=10000.0, clip_qkv=8.0),  # decoder_rows/dbrx.py
                 ffn_config=dict(ffn_hidden_size=32, moe_num_experts=4, moe_top_k=2)),
    "olmoe": dict(num_experts=4, num_experts_per_tok=2),
    "ernie4_5_moe": dict(moe_num_experts=4, moe_k=2, moe_intermediate_size=32, moe_num_shared_experts=1),
    "flex_olmo": dict(num_experts=4, num_experts_per_tok=2, pad_token_id=None),  # FlexOlmoConfig: 100277
    "hunyuan_v1_moe": dict(num_experts=4, moe_topk=2, head_dim=16),
    "minimax_m2": dict(num_local_experts=4, num_experts_per_tok=2, head_dim=16),
    # layers block-sparse attention (the indexer's 2 heads of 16, one per key/value head; blocks
    # of 8: the 7 pad slots of the padded row in one block, whose equal scores would otherwise
    # tie at the top-k), full attention; layer 0 dense (96 wide), layer 1 4 experts of 32, 2 per
    # token, shared experts of 48
    "minimax_m3_vl_text": dict(head_dim=16, num_local_experts=4, num_experts_per_tok=2, intermediate_size=32,
                               dense_intermediate_size=96, shared_intermediate_size=48, index_n_heads=2,
                               index_head_dim=16, index_block_size=8, index_topk_blocks=2, index_local_blocks=1,
                               layer_types=["minimax_m3_sparse", "full_attention"], mlp_layer_types=["dense", "sparse"]),
    # ModernBertDecoderConfig: pad 50283 outside the vocabulary; local_attention 16 (window 8,
    # below the prefill; default 128); layers full, sliding, sliding
    "modernbert-decoder": dict(pad_token_id=0, local_attention=16, num_hidden_layers=3),
    "bert-generation": dict(is_decoder=True),
    # layers sliding (window 16, RoPE), full (NoPE), sliding; layer 0 dense, 4 experts, 2 per token
    "afmoe": dict(num_hidden_layers=3, global_attn_every_n_layers=2, sliding_window=16, head_dim=16, num_experts=4,
                  num_experts_per_tok=2, moe_intermediate_size=32, num_shared_experts=1),  # BertGenerationDecoder is causal only with is_decoder
    # layer 0 dense (mlp_layer_types default), layer 1 MoE; HYV3Config's head_dim defaults to 128
    # both layers sliding (window 4096, RoPE), MoE (first_k_dense_replace 0)
    "cohere2_moe": dict(num_experts=4, num_experts_per_tok=2, head_dim=16),  # Cohere2MoeConfig: 128
    # CohereCompassTextConfig leaves rope_parameters empty, which its model cannot run: an entry per
    # layer type (both layers full attention by default)
    "cohere_compass_text": dict(rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 10000.0}}),
    "hy_v3": dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, head_dim=16),
    # layers chunked (RoPE, L2 q/k norm), full (NoPE, temperature tuning), chunked, full: chunks of
    # 16 below the prefill, floor_scale 8 so that the temperature changes within the prompt; every
    # layer MoE (4 experts, 2 per token, experts of 32, shared expert of 32); dense MLP width 96
    # layers sliding (window 16), full, sliding; RoPE by layer type (the class default: full layers
    # on half the head); layer 0 dense, 4 experts of 32, 2 per token, shared experts of 48
    "laguna": dict(num_hidden_layers=3, layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                   sliding_window=16, head_dim=16, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                   shared_expert_intermediate_size=48),
    # layers sliding (window 16), full, sliding; every layer MoE (4 experts of 32, 2 per token)
    "mellum": dict(num_hidden_layers=3, layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                   sliding_window=16, head_dim=16, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32),
    # layers sliding x3 (window 16), full (BeamConfig's pattern: the last layer full); layers 0-2 dense
    # (mlp_layer_types' default), layer 3 8 experts of 32 in 4 groups, 2 groups kept, 2 per token
    "beam": dict(num_hidden_layers=4, sliding_window=16, head_dim=16, num_experts=8, num_experts_per_tok=2,
                 moe_intermediate_size=32, n_group=4, topk_group=2),
    # layers full, sliding, sliding (MiMoV2FlashConfig's pattern; window 16); q/k heads of 24, values
    # of 16; 1 KV head on the full layer, 2 on the sliding ones; layer 0 dense (mlp_layer_types'
    # default), 8 experts of 32 in 4 groups, 2 groups kept, 2 per token
    "mimo_v2_flash": dict(num_hidden_layers=3, num_key_value_heads=1, sliding_window=16, head_dim=24, v_head_dim=16,
                          n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=32, n_group=4,
                          topk_group=2),
    # layers full (NoPE), sliding (window 16, RoPE), full; layer 0 dense (mlp_only_layers), 4 experts of
    # 32, 2 per token, shared expert of 48
    "flint": dict(num_hidden_layers=3, layer_types=["full_attention", "sliding_attention", "full_attention"],
                  sliding_window=16, head_dim=16, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                  shared_expert_intermediate_size=48, mlp_only_layers=[0]),
    # layers sliding (window 16, RoPE), full (NoPE); every layer MoE: 4 experts of 32, 2 per token,
    # shared experts of 48
    "kolibri1": dict(layer_types=["sliding_attention", "full_attention"], sliding_window=16, head_dim=16,
                     num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                     shared_expert_intermediate_size=48),
    "llama4_text": dict(num_hidden_layers=4, head_dim=16, num_local_experts=4, num_experts_per_tok=2,
                        intermediate_size=32, intermediate_size_mlp=96, attention_chunk_size=16,
                        no_rope_layer_interval=2, floor_scale=8),
    "exaone_moe": dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32, num_shared_experts=1,
                       first_k_dense_replace=1, n_group=4, topk_group=2),
    "phimoe": dict(num_local_experts=4, num_experts_per_tok=2),
    "granitemoe": dict(num_local_experts=4, num_experts_per_tok=2),
    "deepseek_v2": dict(MLA),
    "deepseek_v3": dict(MLA, n_group=4, topk_group=2),  # routed_scaling_factor 2.5, norm_topk_prob
    # DeepSeek sparse attention: each query keeps its index_topk (8) best keys of up to 48 (the
    # prefill), 20 + 24 (greedy); indexer of 32 heads of 16, rotary on its first 8 channels. A key
    # scores exactly 0 when relu zeroes all its heads' q.k: with 8 heads (1 / 256 of the pairs) two
    # such keys met at the top-k boundary of some queries, where torch.topk's order among equal
    # scores is unspecified (ONNX TopK: the lower index first); with 32 none do
    "deepseek_v32": dict(MLA, n_group=4, topk_group=2, index_topk=8, index_n_heads=32, index_head_dim=16),
    # deepseek_v32's, the indexer's RoPE on adjacent pairs; GlmMoeDsaConfig's n_group 1
    "glm_moe_dsa": dict(MLA, index_topk=8, index_n_heads=32, index_head_dim=16),
    # deepseek_v32's indexer; AXK2Config pops first_k_dense_replace (layer 0 dense); no expert groups
    # (n_group null); gate ranks of 8 (default 16)
    "axk2": dict(MLA, index_topk=8, index_n_heads=32, index_head_dim=16, gated_norm_rank=8),
    # AXK1Config reads first_k_dense_replace (1) as a legacy kwarg: mlp_layer_types ["dense", "sparse"]
    "axk1": dict(MLA, n_group=4, topk_group=2),  # routed_scaling_factor 2.5, norm_topk_prob
    "youtu": {k: v for k, v in MLA.items() if k in ("num_key_value_heads", "q_lora_rank", "kv_lora_rank",
                                                   "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")},
    "minicpm3": {k: v for k, v in MLA.items() if k in ("num_key_value_heads", "q_lora_rank", "kv_lora_rank",
                                                      "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")},
    # LongCat-Flash: 2 layers (num_layers; num_hidden_layers is 2 * num_layers, a property that BASE
    # cannot set), each two MLA as DeepSeek's rows (rotary tables of head_dim = qk_rope_head_dim)
    # and a shortcut MoE: 4 experts of 32 and 2 zero-computation (identity) experts, 2 per token
    "longcat_flash": dict(num_layers=2, num_key_value_heads=4, q_lora_rank=32, kv_lora_rank=16, qk_nope_head_dim=16,
                          qk_rope_head_dim=8, head_dim=8, v_head_dim=24, n_routed_experts=4, zero_expert_num=2,
                          moe_topk=2, expert_ffn_hidden_size=32),
    # Glm4MoeLiteConfig has no first_k_dense_replace (mlp_layer_types: layer 0 dense by default)
    "glm4_moe_lite": {**{k: v for k, v in MLA.items() if k != "first_k_dense_replace"}, "n_group": 4,
                      "topk_group": 2},
    # DeepSeek-V3's MoE plan without MLA: layer 0 dense, 8 experts in 4 groups, 2 groups kept
    "dots1": dict(DEEPSEEK_MOE),
    "glm4_moe": dict(DEEPSEEK_MOE),
    # every layer MoE: SolarOpenConfig has no first_k_dense_replace
    "solar_open": {**{k: v for k, v in DEEPSEEK_MOE.items() if k != "first_k_dense_replace"}, "head_dim": 16},
    "granitemoeshared": dict(num_local_experts=4, num_experts_per_tok=2),
    # GraniteSWAConfig: sliding_window 128, above the prefill
    "granite_swa": dict(sliding_window=16),
    "granitemoe_swa": dict(num_local_experts=4, num_experts_per_tok=2, sliding_window=16),
    # sliding_window below the prefill; swiglu_limit low enough to clamp (HF default 7)
    "gpt_oss": dict(num_local_experts=4, num_experts_per_tok=2, head_dim=16, sliding_window=16,
                    swiglu_limit=1.0),
    # num_attention_heads = num_key_value_heads * num_experts_per_tok; kv_channels = the head size
    "jetmoe": dict(num_local_experts=4, num_experts_per_tok=2, kv_channels=16),
})


ROWS = [Row("text-generation", mt, name, ov) for mt, vs in VARIANTS.items() for name, ov in vs]


def base_kwargs(model_type: str) -> dict:
    """The tiny sizes (and per-type settings) every row of `model_type` starts from."""
    return {**H._declared(model_type, BASE), **TYPE_BASE.get(model_type, {})}


# ---------------------------------------------------------------------------------------------
# The runner
# ---------------------------------------------------------------------------------------------
@contextlib.contextmanager
def record_routing(model):
    """Records the experts each MoE router picks on each call: the top-k indices [tokens, k] that
    transformers' router classes (the targets of the model's _can_record_outputs["router_logits"])
    return as their third output (*TopKRouter, *TopkRouter), or the top-k of the logits they return
    last (JetMoeTopKGating). A router inside another recorded module (JetMoeAttention holds one) is
    recorded once. Yields {router module name: [indices per call]}; empty without routers."""
    # (the causal LM's, else its `model`'s: Llama4TextModel declares them, not Llama4ForCausalLM)
    rec = (getattr(model, "_can_record_outputs", None) or getattr(getattr(model, "model", None), "_can_record_outputs", None)
           or {})
    recorders = rec.get("router_logits") or []
    classes = tuple(r.target_class for r in (recorders if isinstance(recorders, list) else [recorders]))
    routers = {n: m for n, m in model.named_modules() if classes and isinstance(m, classes)}
    routers = {n: m for n, m in routers.items() if not any(o.startswith(n + ".") for o in routers)}
    picks: dict[str, list] = {}

    def hook(name, mod, out):
        if isinstance(out, torch.Tensor):  # DbrxRouter: the logits alone; top_k is its DbrxFFN's
            k = getattr(mod, "top_k", None) or model.get_submodule(name.rsplit(".", 1)[0]).top_k
            picks.setdefault(name, []).append(out.topk(k, dim=-1).indices)
            return
        if len(out) == 2:  # Llama4Router: (scores, logits)
            top = out[1].topk(mod.top_k, dim=-1).indices
        else:
            top = out[2] if not out[2].is_floating_point() else out[-1].topk(mod.top_k, dim=-1).indices
        picks.setdefault(name, []).append(top)

    hooks = [m.register_forward_hook(lambda mod, args, out, name=n: hook(name, mod, out))
             for n, m in routers.items()]
    try:
        yield picks
    finally:
        for h in hooks:
            h.remove()


def routing_check(model, picks: dict, valid: np.ndarray) -> tuple[str, list[str]]:
    """The experts picked on the valid (unpadded) prefill tokens, per router: a figure for the
    table ("layers.1.mlp.gate 4/4, ...") and failures for a router that picked a single expert,
    whose parity would not exercise the combination of experts."""
    modules = dict(model.named_modules())
    figures, failures = [], []
    for name, calls in picks.items():
        chosen = set(calls[0].reshape(valid.size, -1)[valid.reshape(-1)].flatten().tolist())
        figures.append(f"{re.sub(r'^model[.]', '', name)} {len(chosen)}/{getattr(modules[name], 'num_experts', '?')}")
        if len(chosen) < 2:
            failures.append(f"routing: {name} picked only expert {sorted(chosen)} on the prompt; "
                            f"the MoE row must route to more than one expert")
    return ", ".join(figures), failures


@dataclasses.dataclass
class Pair:
    """A tiny checkpoint on disk, transformers' model loaded from it (float32 for the greedy tokens,
    its float64 copy for the logits) and the package mobius built."""
    hf_dir: Path
    out_dir: Path
    ref: torch.nn.Module
    ref64: torch.nn.Module
    lm: H.OnnxLM
    genai: bool  # built for onnxruntime-genai (else --runtime none)


def build_pair(model_type: str, overrides: dict, work: Path, row: dict, build_args=(),
               checker: bool = True) -> tuple[Pair | None, list[str]]:
    """Writes the checkpoint, loads the reference, builds the package (with onnx.checker unless
    `checker` is False); returns the pair (None when its I/O contract is wrong) and the failures."""
    failures = []
    hf_dir, out_dir = work / "hf", work / "onnx"
    model = H.write_checkpoint(model_type, overrides, hf_dir)
    ref = H.load_reference(hf_dir, overrides=overrides)
    rope = getattr(ref.config, "rope_parameters", None)  # GPT-J and CodeGen have none
    assert rope == getattr(model.config, "rope_parameters", None), \
        f"config.json reloads with {rope}, expected {model.config.rope_parameters}"
    # harness self-check: the checkpoint on disk (old-schema rewrite included) is the model we made
    ids, mask, pos = H.prefill_batch(ref.config.vocab_size)
    H.reset_rotary(ref)
    assert np.array_equal(H.hf_forward(model, ids, mask, pos)[0], H.hf_forward(ref, ids, mask, pos)[0]), \
        "reloaded checkpoint differs from the in-memory model"

    genai = overrides.get("_runtime", "ort-genai") == "ort-genai"
    path = H.build(hf_dir, out_dir, *build_args, *([] if genai else ["--runtime", "none"]))
    if checker:
        failures += H.check_model(path, row)
    lm = H.OnnxLM(path, ref.config, position_ids_optional="--ep" in build_args)
    problems = lm.io_problems()
    if problems:
        return None, failures + [f"I/O contract: {p}" for p in problems]
    return Pair(hf_dir, out_dir, ref, H.float64(ref), lm, genai), failures


def check_prefill_decode(pair: Pair, row: dict) -> list[str]:
    """(a) padded batch prefill (MoE routers must pick more than one expert on it), (b) one decode
    step on top of the prefill cache; fills row["prefill"], row["decode"] (and row["routing"])."""
    failures = []
    ref, lm, cfg = pair.ref64, pair.lm, pair.ref.config
    ids, mask, pos = H.prefill_batch(cfg.vocab_size)
    H.reset_rotary(ref)
    with record_routing(ref) as picks:
        hf_logits, cache = H.hf_forward(ref, ids, mask, pos)
    if picks:
        row["routing"], routing_failures = routing_check(ref, picks, mask.astype(bool))
        failures += routing_failures
    ox_logits, past = lm(ids, mask, pos)
    valid = mask.astype(bool)
    row["prefill"] = H.delta(row, ox_logits[valid], hf_logits[valid])
    if not row["prefill"] <= TOL:
        failures.append(f"prefill max|Δ| {row['prefill']:.3g} > {TOL}")

    rng = np.random.RandomState(2)
    nxt = rng.randint(0, cfg.vocab_size, size=(2, 1)).astype(np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    pos2 = pos[:, -1:] + 1
    hf2, _ = H.hf_forward(ref, nxt, mask2, pos2, cache)
    ox2, _ = lm(nxt, mask2, pos2, past)
    row["decode"] = H.delta(row, ox2, hf2)
    if not row["decode"] <= TOL:
        failures.append(f"decode max|Δ| {row['decode']:.3g} > {TOL}")
    return failures


def check_handoff(pair: Pair, row: dict) -> list[str]:
    """(e) state handoff, for a model whose layers carry a recurrent state: a prompt prefilled in
    two chunks, the second starting from the state the first returns, gives the logits of one
    prefill of the whole prompt (the float64 reference's); fills row["handoff"]."""
    cfg = pair.ref.config
    ids = np.random.RandomState(4).randint(0, cfg.vocab_size, size=(1, H.PREFILL_LEN)).astype(np.int64)
    pos = np.arange(H.PREFILL_LEN)[None, :]
    want, _ = H.hf_forward(pair.ref64, ids, np.ones_like(ids), pos)
    k = H.PREFILL_LEN // 2 + 1  # chunks of unequal lengths
    first, state = pair.lm(ids[:, :k], np.ones((1, k), np.int64), pos[:, :k])
    second, _ = pair.lm(ids[:, k:], np.ones_like(ids), pos[:, k:], state)
    row["handoff"] = H.delta(row, np.concatenate([first, second], axis=1), want)
    return [] if row["handoff"] <= TOL else [f"state handoff max|Δ| {row['handoff']:.3g} > {TOL}"]


def run_parity(model_type: str, overrides: dict, work: Path, row: dict, build_args=()) -> list[str]:
    """Fills `row` with measurements; returns the failed checks (empty list = pass).
    build_args: further `mobius build` options (--ep ...), for every build of the row; with --ep
    the model may drop its position_ids input."""
    pair, failures = build_pair(model_type, overrides, work, row, build_args)
    if pair is None:
        return failures
    failures += check_prefill_decode(pair, row)
    if H.is_recurrent(model_type):
        failures += check_handoff(pair, row)
    ref, lm, cfg, hf_dir, out_dir, genai = (pair.ref, pair.lm, pair.ref.config, pair.hf_dir,
                                             pair.out_dir, pair.genai)

    # (c) greedy generation, batch 1, unpadded prompt
    prompt = np.random.RandomState(3).randint(0, cfg.vocab_size, size=GEN_PROMPT).astype(np.int64)
    H.reset_rotary(ref)
    hf_tokens = H.greedy(lambda i, m, p, c: H.hf_forward(ref, i, m, p, c), prompt, GEN_NEW)
    ox_tokens = H.greedy(lambda i, m, p, c: lm(i, m, p, c), prompt, GEN_NEW)
    matched = next((k for k, (a, b) in enumerate(zip(hf_tokens, ox_tokens)) if a != b), GEN_NEW)
    row["tokens"] = f"{matched}/{GEN_NEW}"
    if hf_tokens != ox_tokens:
        failures.append(f"greedy tokens diverge at step {matched}: hf {hf_tokens} onnx {ox_tokens}")

    # (d) the consumer: ONNX Runtime GenAI loads the package (genai_config.json) and generates
    # genai stops at an end-of-sequence token: compare with the reference up to its first one
    if not genai:
        r = H.run_mobius("build", "--config", hf_dir, work / "genai-refused", *build_args)
        row["genai"] = "n/a"
        if r.returncode == 0 or "onnxruntime-genai cannot run this model" not in r.stderr:
            failures.append(f"the default build (--runtime ort-genai) must refuse this model: "
                            f"exit {r.returncode}, {r.stderr.strip()[:200]}")
        return failures
    genai_tokens = H.genai_greedy(out_dir, prompt, GEN_NEW)
    eos = json.loads((out_dir / "genai_config.json").read_text())["model"].get("eos_token_id", [])
    eos = set(eos if isinstance(eos, list) else [eos])
    # (genai may or may not return the eos token itself: compare without it)
    expected = next((hf_tokens[:k] for k, t in enumerate(hf_tokens) if t in eos), hf_tokens)
    if genai_tokens and genai_tokens[-1] in eos:
        genai_tokens = genai_tokens[:-1]
    matched = next((k for k, (a, b) in enumerate(zip(expected, genai_tokens)) if a != b),
                   min(len(expected), len(genai_tokens)))
    row["genai"] = f"{matched}/{len(expected)}"
    if expected != genai_tokens:
        failures.append(f"onnxruntime-genai tokens diverge at step {matched}: hf {hf_tokens} genai {genai_tokens}")
    return failures
