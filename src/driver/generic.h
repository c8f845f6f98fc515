// `mobius build --try-generic`: a model_type that is not in the registry, but whose config.json
// describes a Llama-like decoder, is built with the generic Llama decoder (archs/llama.cpp,
// create_llama) and must pass the prefill/decode self-check (eval/self_check.h) before the
// package is committed. Whether the checkpoint's weights are Llama-shaped is then decided by the
// strict weight binding (weights/weight_plan.h), plus: every checkpoint tensor must be used.
#pragma once

#include <string>
#include <vector>

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

}  // namespace mobius
