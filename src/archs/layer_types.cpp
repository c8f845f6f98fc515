#include "archs/layer_types.h"

#include <algorithm>

namespace mobius {

std::vector<std::string> read_layer_list(const HfConfig& c, const std::string& key, int64_t num_hidden_layers,
                                         const std::vector<std::string>& allowed,
                                         std::vector<std::string> fallback) {
  if (!c.has(key)) return fallback;
  const auto& list = c.json()[key];
  if (!list.is_array() || list.size() != static_cast<size_t>(num_hidden_layers))
    c.fail(key, "expected a list of num_hidden_layers strings");
  std::vector<std::string> out;
  for (const auto& t : list) {
    std::string name = t.is_string() ? t.get<std::string>() : "";
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      c.fail(key, "unsupported entry '" + name + "'");
    out.push_back(name);
  }
  return out;
}

std::vector<std::string> read_layer_types(const HfConfig& c, int64_t num_hidden_layers,
                                          std::vector<std::string> fallback) {
  return read_layer_list(c, "layer_types", num_hidden_layers, {"full_attention", "sliding_attention"},
                         std::move(fallback));
}

LayerTypeRopeParams read_layer_type_rope_params(const HfConfig& c) {
  std::optional<HfConfig> nested = c.sub("rope_parameters");
  if (!nested) return {c.sub("rope_scaling"), std::nullopt};
  // a flat dict (no layer-type keys) leaves each layer type its default rope, as transformers'
  // nested_rope_parameter_keys + standardize_rope_params do for these configs
  return {nested->sub("full_attention"), nested->sub("sliding_attention")};
}

void read_nested_layer_type_rope(const HfConfig& c, DecoderSpec& s, const RopeDefaults& full, const RopeDefaults& sliding) {
  const int64_t head_dim = s.attention.head_dim;
  if (!c.has("rope_parameters")) {
    s.rope = RopeConfig::from_params(c, std::nullopt, head_dim, full);
    s.layer_type_rope["sliding_attention"] = RopeConfig::from_params(c, std::nullopt, head_dim, sliding);
    return;
  }
  const auto [full_params, sliding_params] = read_layer_type_rope_params(c);
  for (const auto& t : s.layer_types)
    if (!(t == "sliding_attention" ? sliding_params : full_params))
      c.fail("rope_parameters", "expected an entry for each layer type (\"" + t + "\")");
  if (full_params) s.rope = RopeConfig::from_params(c, full_params, head_dim, {.rope_theta = full.rope_theta, .partial_rotary_factor = 1.0});
  if (sliding_params)
    s.layer_type_rope["sliding_attention"] =
        RopeConfig::from_params(c, sliding_params, head_dim, {.rope_theta = sliding.rope_theta, .partial_rotary_factor = 1.0});
}

RopeConfig layer_type_rope_or_default(const HfConfig& c, const std::string& type, int64_t head_dim,
                                      const char* default_params) {
  std::optional<HfConfig> params;
  if (const std::optional<HfConfig> rope = c.sub("rope_parameters")) {
    params = rope->sub(type);
    if (!params) c.fail("rope_parameters", "expected an entry for each layer type (\"" + type + "\")");
  } else {
    params = HfConfig(nlohmann::json::parse(default_params), c.file(), "default rope_parameters." + type + ".");
  }
  return RopeConfig::from_params(c, params, head_dim, {});
}

}  // namespace mobius
