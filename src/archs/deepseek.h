// DeepSeek's multi-head latent attention as config.json gives it (archs/deepseek.cpp; Kimi
// Linear's MLA layers, archs/kimi_linear.cpp).
#pragma once

#include "blocks/decoder.h"
#include "blocks/mla.h"
#include "config/hf_config.h"

namespace mobius {

// The MLAOptions of DeepseekV2Attention / DeepseekV3Attention (transformers 5.23): hidden_size,
// num_heads and dtype from `s`; q_lora_rank (null: q_proj), kv_lora_rank, qk_nope_head_dim,
// qk_rope_head_dim, v_head_dim and attention_bias from `c`. The softmax scale and the RoPE layout
// are the caller's. Throws mobius::Error naming the field: num_key_value_heads other than
// num_attention_heads (MLA expands keys and values per head), a size not positive.
MLAOptions read_mla_options(const HfConfig& c, const DecoderSpec& s);

// DeepSeek's softmax scale (yarn_apply_mscale): (qk_nope_head_dim + qk_rope_head_dim) ** -0.5 of
// `a`, times mscale ** 2 (0.1 * mscale_all_dim * ln(factor) + 1) for a scaled `rope` with
// mscale_all_dim and a factor above 1.
float mla_softmax_scale(const MLAOptions& a, const RopeConfig& rope);

}  // namespace mobius
