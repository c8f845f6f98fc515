// RoPE settings from config.json in either schema:
//   newer: "rope_parameters": {"rope_type": ..., "rope_theta": ..., "factor": ...}
//   older: "rope_theta": ..., "rope_scaling": {"type" | "rope_type": ..., "factor": ...}
// and the inverse frequencies each rope type defines (transformers/modeling_rope_utils.py:
// default, linear, dynamic, yarn, longrope, llama3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/hf_config.h"

namespace mobius {

// What a config class assumes when config.json leaves a rope field out (e.g. PhiConfig's
// partial_rotary_factor 0.5, CohereConfig's default_theta 500000).
struct RopeDefaults {
  double rope_theta = 10000.0;
  double partial_rotary_factor = 1.0;
};

struct RopeConfig {
  std::string rope_type = "default";
  double rope_theta = 10000.0;
  double partial_rotary_factor = 1.0;
  int64_t head_dim = 0;
  int64_t max_position_embeddings = 0;
  // Scaling parameters (used by the types that name them).
  double factor = 1.0;                       // linear, dynamic, yarn, llama3, longrope
  bool factor_set = false;
  int64_t original_max_position_embeddings = 0;  // yarn, longrope, llama3
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  double beta_fast = 32.0, beta_slow = 1.0;  // yarn
  double mscale = 0.0, mscale_all_dim = 0.0; // yarn
  bool truncate = true;                      // yarn
  double attention_factor = 0.0;             // yarn, longrope; 0 = derive
  bool attention_factor_set = false;
  std::vector<double> short_factor, long_factor;  // longrope

  // Reads the rope fields of `cfg`; head_dim is the attention head size. Throws mobius::Error
  // naming the field on an unknown rope_type or a missing required parameter.
  static RopeConfig from_hf(const HfConfig& cfg, int64_t head_dim, const RopeDefaults& defaults = {});
  // The same with the rope dict given: `params` is one entry of a rope_parameters dict nested by
  // layer type ({"full_attention": {...}, "sliding_attention": {...}}, transformers
  // standardize_rope_params) or none (default rope). defaults.rope_theta applies unless params
  // sets rope_theta (the top-level rope_theta is not read); max_position_embeddings and
  // partial_rotary_factor come from the top level of `cfg`.
  static RopeConfig from_params(const HfConfig& cfg, const std::optional<HfConfig>& params,
                                int64_t head_dim, const RopeDefaults& defaults);
  // Number of rotated channels: int(head_dim * partial_rotary_factor).
  int64_t rotary_dim() const { return static_cast<int64_t>(head_dim * partial_rotary_factor); }
};

// Static inverse frequencies [rotary_dim / 2] and the cos/sin scale, as transformers computes them
// at init. For "longrope" also the long-factor set (chosen when max(position_ids) + 1 >
// original_max_position_embeddings); "dynamic" is recomputed in the graph from the sequence length.
struct RopeFrequencies {
  std::vector<float> inv_freq;
  std::vector<float> long_inv_freq;
  float attention_factor = 1.0f;
};
RopeFrequencies compute_rope_frequencies(const RopeConfig& rope);

}  // namespace mobius
