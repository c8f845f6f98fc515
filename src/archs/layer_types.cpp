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

}  // namespace mobius
