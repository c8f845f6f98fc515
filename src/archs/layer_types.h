// config.json `layer_types`: the attention type of each decoder layer, as transformers' configs
// spell it ("full_attention" | "sliding_attention").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "blocks/decoder.h"
#include "config/hf_config.h"

namespace mobius {

// The per-layer list `key` of `c` (e.g. ExaoneMoe's mlp_layer_types), or `fallback` when the
// field is absent or null. Throws mobius::Error naming the field when it is not a list of
// num_hidden_layers names from `allowed`.
std::vector<std::string> read_layer_list(const HfConfig& c, const std::string& key, int64_t num_hidden_layers,
                                         const std::vector<std::string>& allowed,
                                         std::vector<std::string> fallback);

// The `layer_types` list of `c`, or `fallback` when the field is absent or null (the config
// class's default pattern). Throws mobius::Error naming the field when it is not a list of
// num_hidden_layers known type names.
std::vector<std::string> read_layer_types(const HfConfig& c, int64_t num_hidden_layers,
                                          std::vector<std::string> fallback);

// The RoPE dicts of the two layer types: `rope_parameters` nested by layer type
// ({"full_attention": {...}, "sliding_attention": {...}}, Gemma3TextConfig / Olmo3Config
// convert_rope_params_to_dict), or without it the legacy `rope_scaling` as the full one (sliding:
// none). A flat rope_parameters dict (no layer-type keys) gives neither: transformers ignores it
// there and each layer type keeps its default rope.
struct LayerTypeRopeParams {
  std::optional<HfConfig> full, sliding;
};
LayerTypeRopeParams read_layer_type_rope_params(const HfConfig& c);

// s.rope and s.layer_type_rope["sliding_attention"] from rope_parameters nested by layer type as
// LagunaConfig and MellumConfig keep it (their convert_rope_params_to_dict leaves it as given;
// LagunaRotaryEmbedding reads rope_parameters[layer_type], an entry without partial_rotary_factor
// rotating the whole head), or without it the class defaults `full` and `sliding` (their
// rope_theta and partial_rotary_factor). Throws mobius::Error naming rope_parameters when a layer
// type of s.layer_types has no entry.
void read_nested_layer_type_rope(const HfConfig& c, DecoderSpec& s, const RopeDefaults& full, const RopeDefaults& sliding);

// The RoPE of layer type `type` ("full_attention" | "sliding_attention") for a config class whose
// __post_init__ sets rope_parameters nested by layer type when config.json has none
// (Gemma4TextConfig, Lfm3Config): rope_parameters[type], or `default_params` (that class default's
// entry, a JSON object) without rope_parameters; head_dim is the type's head size. Throws
// mobius::Error naming rope_parameters when it has no entry for `type`.
RopeConfig layer_type_rope_or_default(const HfConfig& c, const std::string& type, int64_t head_dim,
                                      const char* default_params);

}  // namespace mobius
