// What ModernBERT's encoder (archs/modernbert.cpp) and decoder (archs/modernbert_decoder.cpp)
// read alike from their configs (transformers/models/modernbert/configuration_modernbert.py,
// modernbert_decoder/configuration_modernbert_decoder.py, 5.23).
#pragma once

#include <string>
#include <vector>

#include "config/hf_config.h"
#include "config/rope_config.h"

namespace mobius {

struct ModernBertLayers {
  std::vector<std::string> layer_types;  // "full_attention" | "sliding_attention" per layer
  // config.sliding_window: local_attention // 2 (local_attention default 128; -1 when null) unless
  // config.json sets sliding_window; not range-checked here (the encoder's window is two-sided,
  // the decoder's causal)
  int64_t sliding_window;
  RopeConfig full_rope, sliding_rope;
};

// layer_types (else "full_attention" on every global_attn_every_n_layers-th layer from layer 0,
// default 3, "sliding_attention" elsewhere), the sliding window and each layer type's RoPE
// (rope_parameters.{full_attention, sliding_attention}, else global_rope_theta 160000 /
// local_rope_theta 10000 and a legacy rope_scaling for both, as convert_rope_params_to_dict reads
// them) of head size head_dim. Throws mobius::Error naming the field on a bad list, rope dict or
// odd rotated size.
ModernBertLayers read_modernbert_layers(const HfConfig& c, int64_t num_hidden_layers, int64_t head_dim);

}  // namespace mobius
