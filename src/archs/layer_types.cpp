#include "archs/layer_types.h"

namespace mobius {

std::vector<std::string> read_layer_types(const HfConfig& c, int64_t num_hidden_layers,
                                          std::vector<std::string> fallback) {
  if (!c.has("layer_types")) return fallback;
  const auto& types = c.json()["layer_types"];
  if (!types.is_array() || types.size() != static_cast<size_t>(num_hidden_layers))
    c.fail("layer_types", "expected a list of num_hidden_layers strings");
  std::vector<std::string> out;
  for (const auto& t : types) {
    std::string name = t.is_string() ? t.get<std::string>() : "";
    if (name != "full_attention" && name != "sliding_attention")
      c.fail("layer_types", "unsupported layer type '" + name + "'");
    out.push_back(name);
  }
  return out;
}

LayerTypeRopeParams read_layer_type_rope_params(const HfConfig& c) {
  std::optional<HfConfig> nested = c.sub("rope_parameters");
  if (!nested) return {c.sub("rope_scaling"), std::nullopt};
  // a flat dict (no layer-type keys) leaves each layer type its default rope, as transformers'
  // nested_rope_parameter_keys + standardize_rope_params do for these configs
  return {nested->sub("full_attention"), nested->sub("sliding_attention")};
}

}  // namespace mobius
