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
from harness import DROP, GEN_NEW, GEN_PROMPT, TOL, Row

# ---------------------------------------------------------------------------------------------
# The rows: model_type -> [(variant, config overrides)] (the override schema: harness.py).
# No partial_rotary_factor row: transformers 5.23 llama/mistral/qwen2/qwen3 do not honour it (the
# default rope ignores it and rotates the whole head; scaled rope types then fail with a shape error).
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
    # the Gemma configs default head_dim to 256; query_pre_attn_scalar (default 256) differs from
    # head_dim so that scale = query_pre_attn_scalar**-0.5 is tested
    "gemma": dict(head_dim=16),
    "gemma2": dict(head_dim=16, query_pre_attn_scalar=24),
    "gemma3_text": dict(head_dim=16, query_pre_attn_scalar=24),
    "smollm3": dict(pad_token_id=None),  # SmolLM3Config: 128004, outside the vocabulary
}
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
TYPE_BASE.update({
    "mixtral": dict(num_local_experts=4, num_experts_per_tok=2),
    "qwen2_moe": dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                      shared_expert_intermediate_size=96),
    "qwen3_moe": dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32),
    "olmoe": dict(num_experts=4, num_experts_per_tok=2),
    "phimoe": dict(num_local_experts=4, num_experts_per_tok=2),
    "granitemoe": dict(num_local_experts=4, num_experts_per_tok=2),
    "deepseek_v2": dict(MLA),
    "deepseek_v3": dict(MLA, n_group=4, topk_group=2),  # routed_scaling_factor 2.5, norm_topk_prob
    # sliding_window below the prefill; swiglu_limit low enough to clamp (HF default 7)
    "gpt_oss": dict(num_local_experts=4, num_experts_per_tok=2, head_dim=16, sliding_window=16,
                    swiglu_limit=1.0),
    # num_attention_heads = num_key_value_heads * num_experts_per_tok; kv_channels = the head size
    "jetmoe": dict(num_local_experts=4, num_experts_per_tok=2, kv_channels=16),
})
DEEPSEEK_YARN = dict(max_position_embeddings=128, rope_parameters=dict(
    rope_type="yarn", factor=4.0, original_max_position_embeddings=32, mscale=1.0, mscale_all_dim=0.8))
SLIDING_FULL = ["sliding_attention", "full_attention"]
# Softcaps that engage: attention scores reach several units here and logits ~150. The final cap is
# 20, not ~1: at 1.5 tanh rounds the top logits to exactly 1.0 and greedy argmax becomes a tie (the
# reference then picks token 0); at 20 the logits move by up to ~130 and the greedy top-2 gap
# stays >= 0.07. transformers' Gemma3Attention ignores attn_logit_softcapping (so must mobius).
SOFTCAPS = dict(attn_logit_softcapping=1.0, final_logit_softcapping=20.0)

# longrope factors: one per rotary frequency (head_dim / 2 = 8), all distinct
SHORT = [1.0 + 0.07 * i for i in range(8)]
LONG = [1.3 + 0.61 * i for i in range(8)]
LLAMA3 = dict(rope_type="llama3", factor=8.0, low_freq_factor=1.0, high_freq_factor=4.0,
              original_max_position_embeddings=32)  # bands: wavelen < 8 kept, 8..32 smoothed, > 32 / 8

VARIANTS: dict[str, list[tuple[str, dict]]] = {
    "llama": [
        ("default", {}),
        ("default-old-schema", dict(rope_theta=500000.0, rope_scaling=None)),
        ("linear", dict(rope_parameters=dict(rope_type="linear", factor=4.0, rope_theta=10000.0))),
        ("linear-old-schema", dict(rope_theta=10000.0, rope_scaling=dict(type="linear", factor=2.0))),
        ("dynamic", dict(max_position_embeddings=32,
                         rope_parameters=dict(rope_type="dynamic", factor=2.0))),
        ("dynamic-old-schema", dict(max_position_embeddings=24, rope_theta=10000.0,
                                    rope_scaling=dict(type="dynamic", factor=3.0))),
        ("llama3", dict(rope_parameters=dict(LLAMA3, rope_theta=10000.0))),
        ("llama3-old-schema", dict(rope_theta=10000.0, rope_scaling=dict(LLAMA3))),
        ("yarn", dict(max_position_embeddings=128, rope_parameters=dict(
            rope_type="yarn", factor=4.0, original_max_position_embeddings=32))),
        ("yarn-tuned", dict(max_position_embeddings=16384, rope_parameters=dict(
            rope_type="yarn", factor=8.0, original_max_position_embeddings=2048, beta_fast=4.0,
            beta_slow=0.5, mscale=1.0, mscale_all_dim=0.5, truncate=False))),
        ("longrope", dict(max_position_embeddings=128, rope_parameters=dict(
            rope_type="longrope", short_factor=SHORT, long_factor=LONG,
            original_max_position_embeddings=32))),  # factor derived: 128 / 32
        ("longrope-old-schema", dict(max_position_embeddings=128, rope_theta=10000.0, rope_scaling=dict(
            type="longrope", short_factor=SHORT, long_factor=LONG, factor=2.0,
            original_max_position_embeddings=32))),
        ("head-dim-32", dict(head_dim=32)),
        ("tied", dict(tie_word_embeddings=True)),
        ("attention-bias", dict(attention_bias=True)),
        ("mlp-bias", dict(mlp_bias=True)),
        ("sharded", dict(_max_shard_size="40KB")),
    ],
    "mistral": [
        ("default", {}),  # sliding_window 4096 (HF default) > every sequence here
        ("sliding-window-16", dict(sliding_window=16)),
        ("no-sliding-window", dict(sliding_window=None)),
        ("old-schema", dict(rope_theta=1000000.0)),  # no rope_scaling key at all
        ("head-dim-32", dict(head_dim=32)),
    ],
    "qwen2": [
        ("default", {}),  # q/k/v bias
        ("tied", dict(tie_word_embeddings=True)),
        ("yarn-old-schema", dict(rope_theta=1000000.0, rope_scaling=dict(
            type="yarn", factor=4.0, original_max_position_embeddings=32))),
        ("sliding-window-layer1", dict(use_sliding_window=True, sliding_window=16, max_window_layers=1)),
    ],
    "qwen3": [
        ("default", {}),  # q/k norm
        ("head-dim-32", dict(head_dim=32)),
        ("tied", dict(tie_word_embeddings=True)),
        ("attention-bias", dict(attention_bias=True)),
        ("yarn", dict(max_position_embeddings=128, rope_parameters=dict(
            rope_type="yarn", factor=4.0, original_max_position_embeddings=32))),
        ("old-schema", dict(rope_theta=1000000.0, rope_scaling=None)),
    ],
    # Defaults engage each family's mechanisms: partial rotary (phi 0.5, gpt_neox / stablelm 0.25,
    # persimmon / glm 0.5, gptj / codegen rotary_dim 8 of 16), parallel residual (phi, gpt_neox,
    # gptj, codegen, cohere), LayerNorm with bias (without: cohere), fused projections (phi3,
    # gpt_neox, persimmon, codegen, glm), persimmon's qk-layernorm and relu2, logit_scale 0.0625.
    "phi": [
        ("default", {}),  # lm_head bias, GQA
        ("qk-layernorm", dict(qk_layernorm=True)),
        ("tied", dict(tie_word_embeddings=True)),  # lm_head.bias stays
        ("old-schema", dict(rope_theta=20000.0, partial_rotary_factor=0.75)),
        ("old-schema-no-partial", dict(rope_theta=20000.0)),  # PhiConfig's default 0.5
    ],
    "phi3": [
        ("default", {}),  # qkv_proj, gate_up_proj
        ("partial-rotary", dict(rope_parameters=dict(rope_type="default", partial_rotary_factor=0.5))),
        ("longrope", dict(max_position_embeddings=128, original_max_position_embeddings=32,
                          rope_parameters=dict(rope_type="longrope", short_factor=SHORT, long_factor=LONG))),
        ("longrope-partial", dict(max_position_embeddings=128, original_max_position_embeddings=32,
                                  rope_parameters=dict(rope_type="longrope", partial_rotary_factor=0.5,
                                                       short_factor=SHORT[:4], long_factor=LONG[:4]))),
        ("sliding-window-16", dict(sliding_window=16)),
        ("tied", dict(tie_word_embeddings=True)),
    ],
    "gpt_neox": [
        ("default", {}),  # query_key_value per head, use_parallel_residual, rotary_pct 0.25
        ("sequential-residual", dict(use_parallel_residual=False)),
        ("no-attention-bias", dict(attention_bias=False)),
        ("rotary-pct-old-schema", dict(rotary_pct=0.5, rotary_emb_base=20000.0)),
        ("tied", dict(tie_word_embeddings=True)),
    ],
    "stablelm": [
        ("default", {}),
        ("qk-layernorm", dict(qk_layernorm=True)),  # one LayerNorm per head
        ("parallel-residual", dict(use_parallel_residual=True)),
        ("qkv-bias", dict(use_qkv_bias=True)),
    ],
    "persimmon": [
        ("default", {}),  # qk_layernorm on, relu2, query_key_value per head
        ("no-qk-layernorm", dict(qk_layernorm=False)),
    ],
    "gptj": [
        ("default", {}),  # interleaved rotary on 8 of 16 channels
        ("rotary-full-head", dict(rotary_dim=16)),
        ("tied", dict(tie_word_embeddings=True)),  # lm_head.bias stays
    ],
    "codegen": [
        ("default", {}),  # qkv_proj as [mp_num 4, (q, v, k), 1 head]
        ("heads-8", dict(num_attention_heads=8, rotary_dim=4)),  # 2 heads per mp group
    ],
    "glm": [
        ("default", {}),  # interleaved rotary on half the head, gate_up_proj, q/k/v bias
        ("no-attention-bias", dict(attention_bias=False)),
        ("rotary-full-head", dict(rope_parameters=dict(rope_type="default", partial_rotary_factor=1.0))),
    ],
    "glm4": [
        ("default", {}),  # post_self_attn_layernorm, post_mlp_layernorm
        ("tied", dict(tie_word_embeddings=True)),
    ],
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
    "deepseek_v2": [
        ("default", {}),  # MLA with q_lora, greedy top-2 of 8, layer 0 dense
        ("v-head-dim-12", dict(v_head_dim=12, _runtime="none")),
        ("group-limited", dict(topk_method="group_limited_greedy", n_group=4, topk_group=1,
                               routed_scaling_factor=2.0)),
        ("no-q-lora", dict(q_lora_rank=None)),
        ("yarn-mscale", DEEPSEEK_YARN),
        ("dense-only", dict(n_routed_experts=0, first_k_dense_replace=2)),  # no MoE layer
    ],
    "deepseek_v3": [
        ("default", {}),  # MLA, interleaved rope, sigmoid + correction bias, 2 of 4 groups
        ("v-head-dim-12", dict(v_head_dim=12, _runtime="none")),
        ("rope-not-interleaved", dict(rope_interleave=False)),
        ("no-norm-topk", dict(norm_topk_prob=False, routed_scaling_factor=1.0)),
        ("no-q-lora", dict(q_lora_rank=None)),
        ("yarn-mscale", DEEPSEEK_YARN),
    ],
    "gpt_oss": [
        ("default", {}),  # sinks, sliding layer 0 (window 16), yarn, clamped SwiGLU experts
        ("no-attention-bias", dict(attention_bias=False)),
    ],
    "jetmoe": [
        ("default", {}),  # mixture of attention heads + MoE mlp, 2 of 4 experts each; tied
        ("untied-rms-eps-1e-5", dict(tie_word_embeddings=False, rms_norm_eps=1e-5)),
        ("gelu-mqa-top-4-of-8", dict(activation_function="gelu", num_local_experts=8,
                                     num_experts_per_tok=4, num_key_value_heads=1)),
    ],
    # Learned absolute positions, ALiBi, LayerNorm, fused q/k/v (breadth-b)
    "gpt2": [
        ("default", {}),  # Conv1D, fused c_attn, gelu_new, tied
        ("scale-inverse-layer-idx", dict(scale_attn_by_inverse_layer_idx=True)),
        ("no-scale-attn-weights", dict(scale_attn_weights=False)),
        ("reorder-and-upcast-attn", dict(reorder_and_upcast_attn=True)),
        ("untied", dict(tie_word_embeddings=False)),
    ],
    "gpt_bigcode": [
        ("default", {}),  # multi_query: one key/value head
        ("multi-head", dict(multi_query=False)),  # c_attn per head [q | k | v]
        ("untied", dict(tie_word_embeddings=False)),
    ],
    "gpt_neo": [
        ("default", {}),  # layer 0 global, layer 1 local with window 16; scores not scaled
        ("local-global-window-5", dict(attention_types=[[["local", "global"], 1]], window_size=5)),
        ("untied", dict(tie_word_embeddings=False)),
    ],
    "opt": [
        ("default", {}),  # pre-norm, relu, positions + 2, tied
        ("post-norm", dict(do_layer_norm_before=False)),
        ("project-in-out", dict(word_embed_proj_dim=32)),
        ("no-bias", dict(enable_bias=False)),
        ("remove-final-layer-norm", dict(_remove_final_layer_norm=True)),
        ("untied-gelu", dict(tie_word_embeddings=False, activation_function="gelu")),
    ],
    "bloom": [
        ("default", {}),  # ALiBi from the mask's cumulative positions
        ("heads-12", dict(hidden_size=96, num_attention_heads=12)),  # 8 + 4 interleaved slopes
        ("residual-post-layernorm", dict(apply_residual_connection_post_layernorm=True)),
        ("untied", dict(tie_word_embeddings=False)),
    ],
    "mpt": [
        ("default", {}),  # ALiBi, alibi_bias_max 8, no biases
        ("heads-12", dict(hidden_size=96, num_attention_heads=12)),  # slopes of 16, interleaved
        ("alibi-bias-max-16", dict(attn_config=dict(alibi_bias_max=16))),  # ignored, as by MptModel
        ("clip-qkv", dict(attn_config=dict(clip_qkv=0.5))),
        ("softmax-scale", dict(attn_config=dict(softmax_scale=0.3))),
        ("untied", dict(tie_word_embeddings=False)),
    ],
    "falcon": [
        ("default", {}),  # old layout, multi_query, parallel attention, RoPE
        ("multi-head", dict(multi_query=False)),  # query_key_value per head [q | k | v]
        ("sequential-bias", dict(multi_query=False, parallel_attn=False, bias=True)),
        ("new-architecture", dict(new_decoder_architecture=True, num_kv_heads=2)),  # ln_attn, ln_mlp
        ("new-architecture-one-norm", dict(new_decoder_architecture=True, num_kv_heads=2,
                                           num_ln_in_parallel_attn=1)),
        ("rope-linear", dict(rope_parameters=dict(rope_type="linear", factor=2.0, rope_theta=10000.0))),
        # ALiBi: transformers 5.23's eager FalconAttention adds the bias twice (once through the
        # mask FalconModel builds, once itself); its default SDPA path adds it once, as trained.
        ("alibi", dict(alibi=True, _attn_implementation="sdpa")),
        ("alibi-16-heads", dict(alibi=True, num_attention_heads=16, multi_query=False,
                                _attn_implementation="sdpa")),  # slopes 2^(-k/2): bfloat16 rounding
        ("untied", dict(tie_word_embeddings=False)),
    ],
    "gemma": [
        ("default", {}),  # tied, (1 + weight) norms, embeddings * sqrt(hidden_size)
        ("untied", dict(tie_word_embeddings=False)),
        ("attention-bias", dict(attention_bias=True)),
        ("legacy-gelu", dict(_json=dict(hidden_act="gelu"))),  # GemmaConfig reads it as tanh gelu
        ("old-schema", dict(rope_theta=500.0)),
    ],
    "gemma2": [
        ("default", {}),  # softcaps 50 / 30, sliding_window 4096, layers sliding, full
        ("softcap-window-16", dict(sliding_window=16, **SOFTCAPS)),
        ("no-softcap-window-8", dict(sliding_window=8, attn_logit_softcapping=None,
                                     final_logit_softcapping=None)),
        ("full-sliding-untied-bias", dict(layer_types=SLIDING_FULL[::-1], sliding_window=12,
                                          tie_word_embeddings=False, attention_bias=True, **SOFTCAPS)),
        ("no-layer-types", dict(sliding_window=16, _json=dict(layer_types=DROP))),  # default pattern
        ("old-schema", dict(sliding_window=16, rope_theta=1000.0,
                            rope_scaling=dict(type="linear", factor=2.0))),
    ],
    "gemma3_text": [
        ("default", {}),  # q/k norms; 2 layers with the default pattern 6: both sliding
        ("window-16-softcap", dict(layer_types=SLIDING_FULL, sliding_window=16, **SOFTCAPS)),
        ("rope-per-type", dict(layer_types=SLIDING_FULL, sliding_window=12, rope_parameters=dict(
            full_attention=dict(rope_type="linear", factor=4.0, rope_theta=100000.0),
            sliding_attention=dict(rope_type="default", rope_theta=100.0)))),
        ("yarn-full", dict(layer_types=SLIDING_FULL, sliding_window=16, max_position_embeddings=128,
                           rope_parameters=dict(
                               full_attention=dict(rope_type="yarn", factor=4.0, rope_theta=10000.0,
                                                   original_max_position_embeddings=32),
                               sliding_attention=dict(rope_type="default", rope_theta=1000.0)))),
        ("untied-bias", dict(layer_types=SLIDING_FULL, sliding_window=16, tie_word_embeddings=False,
                             attention_bias=True)),
        # pre-transformers-5 config: rope_theta + rope_scaling (full), rope_local_base_freq
        # (sliding), sliding_window_pattern instead of layer_types
        ("old-schema", dict(rope_theta=20000.0, rope_local_base_freq=500.0,
                            rope_scaling=dict(rope_type="linear", factor=8.0), sliding_window=16,
                            sliding_window_pattern=2, _json=dict(sliding_window_pattern=2,
                                                                 layer_types=DROP,
                                                                 _sliding_window_pattern=DROP))),
    ],
    # Llama-like types with DecoderSpec options (breadth-c)
    "apertus": [
        ("default", {}),  # xIELU MLP, per-head q/k norm, attention_layernorm/feedforward_layernorm
        ("attention-bias", dict(attention_bias=True)),
    ],
    "arcee": [
        ("default", {}),  # non-gated relu2 MLP
        ("mlp-bias", dict(mlp_bias=True, attention_bias=True)),
    ],
    "cwm": [
        ("default", {}),  # layer 0 full, layer 1 sliding (window 8192), llama3 rope
        ("sliding-window-16", dict(sliding_window=16)),
    ],
    "ernie4_5": [
        ("default", {}),  # interleaved rope, tied
        ("use-bias", dict(use_bias=True)),
        ("untied", dict(tie_word_embeddings=False)),
    ],
    "exaone4": [
        ("default", {}),  # window 4096, pattern 4: both layers sliding, both with rope
        ("sliding-16-pattern-2", dict(sliding_window=16, sliding_window_pattern=2)),  # layer 1 full, NoPE
        ("no-sliding-window", dict(sliding_window=None, layer_types=["full_attention"] * 2)),  # rope everywhere
    ],
    "granite": [
        ("default", {}),  # attention_multiplier 1.0
        ("multipliers", dict(embedding_multiplier=3.0, residual_multiplier=0.5,
                             attention_multiplier=0.15, logits_scaling=4.0)),
        ("tied", dict(tie_word_embeddings=True, logits_scaling=2.0)),
    ],
    "helium": [
        ("default", {}),  # interleaved rope, o_proj without bias
        ("attention-bias", dict(attention_bias=True)),
    ],
    "hunyuan_v1_dense": [
        ("default", {}),  # q/k norm after rope
        ("attention-bias", dict(attention_bias=True)),
        ("ntk-alpha", dict(rope_parameters=dict(rope_type="dynamic", alpha=1000.0, factor=1.0,
                                                rope_theta=10000.0))),
    ],
    "hyperclovax": [
        ("default", {}),  # post_norm1 / post_norm2
        ("multipliers", dict(embedding_multiplier=3.0, residual_multiplier=0.5,
                             attention_multiplier=0.15, logits_scaling=0.25)),
        ("no-post-norm", dict(use_post_norm=False, logits_scaling=2.0)),
    ],
    "internlm3": [
        ("default", {}),
        ("bias", dict(qkv_bias=True, bias=True)),
    ],
    "iquestcoder": [
        ("default", {}),
    ],
    "jais2": [
        ("default", {}),  # LayerNorm, non-gated relu2 MLP, all biases
        ("no-bias", dict(attention_bias=False, mlp_bias=False)),
    ],
    "ministral": [
        ("default", {}),  # every layer sliding, window 4096
        ("sliding-window-16", dict(sliding_window=16)),
        ("layer-types", dict(sliding_window=16, layer_types=["full_attention", "sliding_attention"])),
    ],
    "ministral3": [
        ("default", {}),  # yarn, original 16384: llama_4 scaling 1 at these positions
        ("llama4-scaling", dict(rope_parameters=dict(
            rope_type="yarn", rope_theta=1000000.0, factor=4.0, original_max_position_embeddings=32,
            beta_fast=32.0, beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0, llama_4_scaling_beta=0.1))),
        ("sliding-window-16", dict(sliding_window=16)),
    ],
    "nanochat": [
        ("default", {}),  # L2 norms, embedding norm, reversed rope, fc1/fc2, softcap 15
        ("softcap-0.5", dict(final_logit_softcapping=0.5, attention_bias=True)),
        ("no-softcap", dict(final_logit_softcapping=None)),
    ],
    "nemotron": [
        ("default", {}),  # LayerNorm1P, relu2 up/down MLP, partial_rotary_factor 0.5
        ("bias", dict(attention_bias=True, mlp_bias=True)),
    ],
    "olmo": [
        ("default", {}),  # parameter-free LayerNorm
        ("clip-qkv", dict(clip_qkv=1.0)),
        ("attention-bias", dict(attention_bias=True)),
    ],
    "olmo2": [
        ("default", {}),  # post-norm, full-width q/k norm
        ("attention-bias", dict(attention_bias=True)),
        ("tied", dict(tie_word_embeddings=True)),
    ],
    "olmo3": [
        ("default", {}),  # both layers sliding (window 4096), theta 500000
        ("sliding-16-layer1-full", dict(sliding_window=16, layer_types=["sliding_attention", "full_attention"])),
        ("rope-per-layer-type", dict(
            sliding_window=16, layer_types=["sliding_attention", "full_attention"],
            rope_parameters={"full_attention": dict(rope_type="yarn", factor=4.0, rope_theta=500000.0,
                                                    original_max_position_embeddings=32),
                             "sliding_attention": dict(rope_type="default", rope_theta=10000.0)})),
        ("old-schema", dict(sliding_window=16, layer_types=["sliding_attention", "full_attention"],
                            rope_theta=20000.0, rope_scaling=dict(rope_type="linear", factor=2.0))),
        # Olmo3Config keeps rope_type "default" when rope_scaling only has the legacy "type" key
        ("old-schema-type-key", dict(sliding_window=16, layer_types=["sliding_attention", "full_attention"],
                                     rope_theta=20000.0, rope_scaling=dict(type="linear", factor=2.0))),
    ],
    "seed_oss": [
        ("default", {}),  # q/k/v bias, o_proj without
        ("out-bias", dict(attention_out_bias=True)),
    ],
    "smollm3": [
        ("default", {}),  # tied; interval 4: both layers use rope
        ("nope-layer1", dict(no_rope_layer_interval=2)),
        ("sliding-nope-layer1", dict(no_rope_layer_interval=2, use_sliding_window=True, sliding_window=16)),
    ],
    "starcoder2": [
        ("default", {}),  # LayerNorm with bias, c_fc/c_proj, use_bias
        ("sliding-window-16", dict(sliding_window=16)),
        ("no-bias-untied", dict(use_bias=False, tie_word_embeddings=False)),
    ],
}

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
    rec = getattr(model, "_can_record_outputs", None) or {}
    recorders = rec.get("router_logits") or []
    classes = tuple(r.target_class for r in (recorders if isinstance(recorders, list) else [recorders]))
    routers = {n: m for n, m in model.named_modules() if classes and isinstance(m, classes)}
    routers = {n: m for n, m in routers.items() if not any(o.startswith(n + ".") for o in routers)}
    picks: dict[str, list] = {}

    def hook(name, mod, out):
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
    """A tiny checkpoint on disk, transformers' model loaded from it and the package mobius built."""
    hf_dir: Path
    out_dir: Path
    ref: torch.nn.Module
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
    return Pair(hf_dir, out_dir, ref, lm, genai), failures


def check_prefill_decode(pair: Pair, row: dict) -> list[str]:
    """(a) padded batch prefill (MoE routers must pick more than one expert on it), (b) one decode
    step on top of the prefill cache; fills row["prefill"], row["decode"] (and row["routing"])."""
    failures = []
    ref, lm, cfg = pair.ref, pair.lm, pair.ref.config
    ids, mask, pos = H.prefill_batch(cfg.vocab_size)
    H.reset_rotary(ref)
    with record_routing(ref) as picks:
        hf_logits, cache = H.hf_forward(ref, ids, mask, pos)
    if picks:
        row["routing"], routing_failures = routing_check(ref, picks, mask.astype(bool))
        failures += routing_failures
    ox_logits, past = lm(ids, mask, pos)
    valid = mask.astype(bool)
    row["prefill"] = H.max_abs(ox_logits[valid], hf_logits[valid])
    if not row["prefill"] <= TOL:
        failures.append(f"prefill max|Δ| {row['prefill']:.3g} > {TOL}")

    rng = np.random.RandomState(2)
    nxt = rng.randint(0, cfg.vocab_size, size=(2, 1)).astype(np.int64)
    mask2 = np.concatenate([mask, np.ones((2, 1), np.int64)], axis=1)
    pos2 = pos[:, -1:] + 1
    hf2, _ = H.hf_forward(ref, nxt, mask2, pos2, cache)
    ox2, _ = lm(nxt, mask2, pos2, past)
    row["decode"] = H.max_abs(ox2, hf2)
    if not row["decode"] <= TOL:
        failures.append(f"decode max|Δ| {row['decode']:.3g} > {TOL}")
    return failures


def run_parity(model_type: str, overrides: dict, work: Path, row: dict, build_args=()) -> list[str]:
    """Fills `row` with measurements; returns the failed checks (empty list = pass).
    build_args: further `mobius build` options (--ep ...), for every build of the row; with --ep
    the model may drop its position_ids input."""
    pair, failures = build_pair(model_type, overrides, work, row, build_args)
    if pair is None:
        return failures
    failures += check_prefill_decode(pair, row)
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
