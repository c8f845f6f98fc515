// RoPE settings from config.json in either schema:
//   newer: "rope_parameters": {"rope_type": ..., "rope_theta": ..., "factor": ...}
//   older: "rope_theta": ..., "rope_scaling": {"type" | "rope_type": ..., "factor": ...}
// and the inverse frequencies each rope type defines (transformers/modeling_rope_utils.py:
// default, linear, dynamic, yarn, longrope, llama3, proportional).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/hf_config.h"

namespace mobius {

// What a type's transformers config class and modeling code assume about RoPE, for the fields
// config.json leaves out (each arch file cites its configuration_<type>.py / modeling_<type>.py).
struct RopeDefaults {
  // The config class' default_theta (PreTrainedConfig: 10000; e.g. GptOssConfig 150000).
  double rope_theta = 10000.0;
  // Set when the type's modeling code rotates partial_rotary_factor of the head (its default rope
  // reads it: phi, phi3, stablelm, persimmon, gpt_neox, glm, glm4, nemotron): the default used when
  // config.json has none. Unset: the whole head rotates and a partial_rotary_factor in config.json
  // is ignored, as transformers' default rope of those types does (with a scaled rope type
  // transformers fails on it, so mobius refuses it).
  std::optional<double> partial_rotary_factor = std::nullopt;
  // The config class' rope_parameters when config.json has neither rope_parameters nor
  // rope_scaling (e.g. ApertusConfig.__post_init__'s llama3 dict), as a JSON object; empty: none.
  std::string rope_parameters = {};
  // Legacy rope_type spellings the config class renames (Phi3Config: "su", "yarn" -> "longrope").
  std::vector<std::pair<std::string, std::string>> rope_type_aliases = {};
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
  // proportional (_compute_proportional_rope_parameters, Gemma 4's full layers): the whole head
  // rotates (rotate_half over head_dim), the first int(proportion * head_dim // 2) frequencies
  // 1 / theta**(2i / head_dim), the others 0 (those channel pairs stay as they are), all / factor.
  // The dict's partial_rotary_factor is this proportion, not partial_rotary_factor above.
  double rope_proportion = 1.0;

  // Reads the rope fields of `cfg` as transformers' convert_rope_params_to_dict and
  // standardize_rope_params do (modeling_rope_utils.py): rope_parameters, else rope_scaling, else
  // defaults.rope_parameters; rope_theta from that dict, else the top-level rope_theta, else
  // defaults.rope_theta. head_dim is the attention head size. Throws mobius::Error naming the field
  // on an unknown rope_type, a missing required parameter or a partial_rotary_factor the type
  // cannot apply.
  static RopeConfig from_hf(const HfConfig& cfg, int64_t head_dim, const RopeDefaults& defaults = {});
  // The rope dict from_hf reads: rope_parameters, else rope_scaling, else defaults.rope_parameters
  // (a view of `cfg`'s file), or none.
  static std::optional<HfConfig> params(const HfConfig& cfg, const RopeDefaults& defaults = {});
  // The same with the rope dict given: `params` is one entry of a rope_parameters dict nested by
  // layer type ({"full_attention": {...}, "sliding_attention": {...}}, transformers
  // standardize_rope_params), from_hf's dict, or none (default rope). defaults.rope_theta and
  // defaults.partial_rotary_factor apply unless params sets them (the top-level rope_theta and
  // partial_rotary_factor are not read); max_position_embeddings comes from the top level of `cfg`.
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
