// The LFM2 decoder (archs/lfm2.cpp), which LFM2-MoE shares (archs/lfm2_moe.cpp: Lfm2MoeDecoderLayer
// is Lfm2DecoderLayer with a sparse feed_forward past num_dense_layers), and its short-convolution
// layers, which LFM3 shares (archs/lfm3.cpp).
#pragma once

#include <string>
#include <vector>

#include "blocks/decoder.h"
#include "config/hf_config.h"

namespace mobius {

// The DecoderSpec of Lfm2Config's / Lfm2MoeConfig's shared fields (vocab_size, hidden_size,
// num_hidden_layers, norm_eps, tie_word_embeddings or its alias tie_embedding, the attention's
// num_attention_heads, num_key_value_heads, head_dim, RoPE; conv_L_cache, conv_bias) with the
// short convolution "conv" on the layers whose `layer_types` entry is "conv", self-attention on
// the "full_attention" ones; s.mlp is left to the caller (hidden_size, silu, w1 / w3 / w2).
// Throws mobius::Error naming the field.
DecoderSpec lfm2_spec(const HfConfig& c, DataType dtype, std::vector<std::string> layer_types);

// s.make_mixer: Lfm2ShortConv (blocks/short_conv.h: in_proj, conv, out_proj) on the layers whose
// s.layer_types entry is "conv", kernel conv_L_cache (default `default_kernel`: LFM2 3, LFM3 7),
// conv_bias; s.hidden_size and s.dtype must be set. Throws mobius::Error naming conv_L_cache out of
// 2 to kMaxSmallSize.
void set_short_conv_layers(const HfConfig& c, DecoderSpec& s, int64_t default_kernel);

}  // namespace mobius
