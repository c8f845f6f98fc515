// config.json fields shared by the mixture-of-experts decoders (archs/mixtral.cpp, deepseek.cpp,
// gpt_oss.cpp), under their transformers 5.23 names.
#pragma once

#include <string>
#include <vector>

#include "blocks/decoder.h"
#include "config/hf_config.h"

namespace mobius {

// The common MoEOptions of `s`'s decoder: hidden_size, hidden_act and dtype from `s`;
// the expert count from `experts_key` (num_local_experts | num_experts | n_routed_experts; for
// "num_local_experts" also its alias "num_experts"), num_experts_per_tok, and the per-expert
// intermediate size from `intermediate_key`. Throws mobius::Error naming the field when one is
// missing or out of range (1 <= num_experts_per_tok <= experts).
MoEOptions read_moe_options(const HfConfig& c, const DecoderSpec& s, const std::string& experts_key,
                            const std::string& intermediate_key);

// Qwen2-MoE / Qwen3-MoE: layer i is sparse unless listed in mlp_only_layers, and when
// (i + 1) % decoder_sparse_step == 0. Throws mobius::Error naming the field on a bad value.
std::vector<bool> read_sparse_layers(const HfConfig& c, int64_t num_hidden_layers);

}  // namespace mobius
