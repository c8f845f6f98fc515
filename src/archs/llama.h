// The Llama DecoderSpec (archs/llama.cpp), which its relatives start from.
#pragma once

#include <memory>

#include "blocks/decoder.h"
#include "config/hf_config.h"

namespace mobius {

// dtype, vocab_size, hidden_size, num_hidden_layers, rms_norm_eps (norm_eps, default
// `default_rms_norm_eps`) and every layer "full_attention": what the RMSNorm decoders read alike.
// Throws mobius::Error naming a missing field.
DecoderSpec decoder_sizes(const HfConfig& c, DataType dtype, double default_rms_norm_eps = 1e-6);

// decoder_sizes with LayerNorm (with bias) norms of epsilon layer_norm_eps (default 1e-5).
DecoderSpec layernorm_decoder_sizes(const HfConfig& c, DataType dtype);

// vocab_size, hidden_size, num_hidden_layers, rms_norm_eps (norm_eps), tie_word_embeddings,
// num_attention_heads, num_key_value_heads, head_dim, attention_bias, intermediate_size,
// hidden_act, mlp_bias and the RoPE fields (with the type's config-class defaults `rope`, see
// config/rope_config.h); every layer "full_attention". The MLP's width is `intermediate_key`'s
// (a type without a dense MLP names its experts' width: SolarOpen's moe_intermediate_size).
// Throws mobius::Error naming the field on a missing or inconsistent one.
DecoderSpec llama_spec(const HfConfig& c, DataType dtype, const RopeDefaults& rope = {},
                       const std::string& intermediate_key = "intermediate_size");

// The Mistral DecoderSpec (MistralAttention / MistralMLP without bias; every layer slides by
// sliding_window, 4096 when config.json leaves it out, none when it is null): mistral and the text
// decoder of mistral3 (archs/mistral3.cpp).
DecoderSpec mistral_spec(const HfConfig& c, DataType dtype);

// The Ministral 3 DecoderSpec (archs/ministral3.cpp): ministral3 and the text decoder of mistral3
// checkpoints whose text_config is ministral3.
DecoderSpec ministral3_spec(const HfConfig& c, DataType dtype);

// The Qwen2 DecoderSpec (Qwen2Attention: q/k/v bias, o_proj and Qwen2MLP without; per-layer sliding
// from use_sliding_window / max_window_layers / layer_types): qwen2 and the text decoder of
// qwen2_vl / qwen2_5_vl (archs/qwen2_vl.cpp). Throws mobius::Error naming a bad field.
DecoderSpec qwen2_spec(const HfConfig& c, DataType dtype, const RopeDefaults& rope = {});

// The Phi-3 DecoderSpec (archs/phi3.cpp: fused qkv_proj and gate_up_proj, RoPE with
// partial_rotary_factor and longrope, sliding_window on every layer when set): phi3 and the text
// decoder of phi4_multimodal (archs/phi4_multimodal.cpp). Throws mobius::Error naming a bad field.
DecoderSpec phi3_spec(const HfConfig& c, DataType dtype);

// Per-layer attention types from `layer_types` (absent: unchanged), and sliding_window when a
// layer slides (`default_sliding_window`, the config class' default, when config.json has none;
// without one the field is required). Throws mobius::Error naming the field on a bad list.
void read_layer_types(const HfConfig& c, DecoderSpec& s, std::optional<int64_t> default_sliding_window = {});

// The DecoderCausalLM of `s`.
std::unique_ptr<Architecture> make_decoder(const DecoderSpec& s);

}  // namespace mobius
