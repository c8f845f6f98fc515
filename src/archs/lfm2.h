// The LFM2 decoder (archs/lfm2.cpp), which LFM2-MoE shares (archs/lfm2_moe.cpp: Lfm2MoeDecoderLayer
// is Lfm2DecoderLayer with a sparse feed_forward past num_dense_layers).
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

}  // namespace mobius
