// The Qwen3-Next decoder (archs/qwen3_next.cpp), which the Qwen3.5 text decoders share
// (archs/qwen3_5.cpp: Qwen3_5TextModel is Qwen3NextModel with a dense MLP on every layer and the
// gated DeltaNet's projections separate; Qwen3_5MoeTextModel the same with the sparse MoE block on
// every layer).
#pragma once

#include "blocks/decoder.h"
#include "blocks/gated_delta_net.h"
#include "config/hf_config.h"

namespace mobius {

// The DecoderSpec of Qwen3NextConfig's / Qwen3_5TextConfig's shared fields: the Llama fields
// (archs/llama.h llama_spec; RoPE on partial_rotary_factor, default 0.25, of head_dim), every
// RMSNorm scaled by (1 + weight), gated attention (q_proj with each head's gate, q_norm / k_norm)
// on the "full_attention" layers and the gated DeltaNet "linear_attn" (linear_num_key_heads,
// linear_num_value_heads, linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim,
// hidden_act, rms_norm_eps; `projections`) on the "linear_attention" ones, from layer_types or,
// without it, full_attention_interval (default 4: layer i is full attention when i + 1 is a
// multiple). s.mlp is the dense MLP of `intermediate_key` (a type without a dense MLP names its
// experts' width). Throws mobius::Error naming the field.
DecoderSpec qwen3_next_spec(const HfConfig& c, DataType dtype, GatedDeltaNetProjections projections,
                            const std::string& intermediate_key = "intermediate_size");

// qwen3_next_spec's parts: the spec without layer types or mixers (the Llama fields with RoPE on
// `partial_rotary_factor` of head_dim by default: Qwen3-Next / Qwen3.5 0.25, Qwen4-Exp 1, the (1 + weight)
// norms, gated attention with q_norm / k_norm, MLP without bias), and the gated DeltaNet's options
// from the linear_* fields, hidden_act and s.norm_eps (Qwen4-Exp, archs/qwen4_exp.cpp, reads its
// own layer types).
DecoderSpec qwen3_next_layers_spec(const HfConfig& c, DataType dtype, const std::string& intermediate_key,
                                   double partial_rotary_factor);
GatedDeltaNetOptions qwen3_next_delta(const HfConfig& c, const DecoderSpec& s, GatedDeltaNetProjections projections);

// Qwen3NextSparseMoeBlock / Qwen3_5MoeSparseMoeBlock: num_experts experts of
// moe_intermediate_size (qwen2_moe's keys experts.{e}.gate_proj / up_proj / down_proj: transformers
// stacks them on load, unstacks them on save), softmax top-k of num_experts_per_tok, and the
// shared_expert (shared_expert_intermediate_size, default 512) scaled by sigmoid(shared_expert_gate).
// The router's renormalization is the type's (Qwen3-Next: norm_topk_prob; Qwen3.5-MoE: always).
MoEOptions qwen3_next_moe(const HfConfig& c, const DecoderSpec& s);

}  // namespace mobius
