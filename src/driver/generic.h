// `mobius build --try-generic`: a model_type that is not in the registry, but whose config.json
// describes a Llama-like decoder, is built with the generic Llama decoder (archs/llama.cpp,
// create_llama) and must pass the prefill/decode self-check (eval/self_check.h) before the
// package is committed. Whether the checkpoint's weights are Llama-shaped is then decided by the
// strict weight binding (weights/weight_plan.h), plus: every checkpoint tensor must be used.
// A config that names experts (moe_like) is built with the generic mixture-of-experts decoder
// instead (archs/generic_moe.h), its experts' layout read from the checkpoint's tensor names.
#pragma once

#include <string>
#include <vector>

#include "archs/generic_moe.h"
#include "config/hf_config.h"

namespace mobius {

// The config.json fields that make a decoder Llama-like, in LlamaConfig's spelling
// (transformers/models/llama/configuration_llama.py): hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size, vocab_size, rms_norm_eps.
const std::vector<std::string>& llama_like_fields();

// The fields of llama_like_fields() that `config` lacks (absent or null); empty = Llama-like.
std::vector<std::string> missing_llama_fields(const HfConfig& config);

// A config.json field set to a mechanism of a Llama relative that the generic decoder does not
// implement and that no weight reveals: sliding-window attention (sliding_window, unless
// use_sliding_window is false; layer_types other than full_attention), logit soft-capping
// (attn_logit_softcapping, final_logit_softcapping), and the scale knobs of Granite / Cohere /
// MiniCPM (embedding_multiplier, attention_multiplier, residual_multiplier, logits_scaling,
// logit_scale, scale_emb, scale_depth) other than 1. Returns the field and why, or an empty
// field. The 8-token self-check could not see these, so --try-generic refuses them.
struct UnsupportedField {
  std::string field;
  std::string mechanism;
};
UnsupportedField unsupported_llama_field(const HfConfig& config);

// Whether `config` names experts: num_local_experts or num_experts (MixtralConfig,
// Qwen3MoeConfig), so --try-generic builds the generic MoE decoder.
bool moe_like(const HfConfig& config);

// The decoder --try-generic builds `config` with, for messages: "generic MoE decoder" when
// moe_like, else "generic Llama decoder".
std::string generic_decoder_name(const HfConfig& config);

// A config.json field of a MoE relative that the generic MoE decoder (softmax top-k router, routed
// experts only) does not implement: shared experts (shared_expert_intermediate_size,
// n_shared_experts, num_shared_experts, moe_num_shared_experts, shared_intermediate_size other
// than 0), group-limited routing (n_group, topk_group other than 1), routed_scaling_factor other
// than 1, scoring_func other than softmax, topk_method other than greedy, dense leading layers
// (first_k_dense_replace other than 0), latent experts (moe_latent_size). Returns the field and
// why, or an empty field.
UnsupportedField unsupported_moe_field(const HfConfig& config);

// The layout of the experts among a checkpoint's tensor names (archs/generic_moe.h
// GenericExperts; the first found of block_sparse_moe, per_expert, stacked) and whether the
// attention has q_norm / k_norm. Throws mobius::Error naming `config` and `experts_field` when
// no name holds experts in any of those layouts.
GenericMoEShape generic_moe_shape(const std::vector<std::string>& names, const HfConfig& config);

}  // namespace mobius
