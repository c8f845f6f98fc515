#include "registry/config_defaults.h"

namespace mobius {

HfConfig with_class_defaults(const HfConfig& cfg, const std::string& model_type) {
  struct Row {
    const char* model_type;
    const char* defaults;      // a JSON object
    const char* non_nullable;  // a JSON list of field names
  };
  static const Row rows[] = {
#include "registry/config_defaults.inc"
  };
  for (const Row& r : rows) {
    if (model_type != r.model_type) continue;
    nlohmann::json merged = cfg.json();
    const nlohmann::json defaults = nlohmann::json::parse(r.defaults);
    for (const auto& [key, value] : defaults.items())
      if (!merged.contains(key)) merged[key] = value;
    for (const auto& key : nlohmann::json::parse(r.non_nullable))
      if (merged.contains(key) && merged[key].is_null())
        cfg.fail(key, "null is not valid for model type '" + model_type +
                          "' (transformers' config class requires a value): set it or remove the field");
    return HfConfig(std::move(merged), cfg.file(), cfg.prefix());
  }
  return cfg;
}

HfConfig with_attribute_map(const HfConfig& cfg,
                            std::initializer_list<std::pair<const char*, const char*>> attribute_map) {
  nlohmann::json merged = cfg.json();
  for (const auto& [alias, field] : attribute_map)
    if (merged.contains(alias)) merged[field] = merged[alias];
  return HfConfig(std::move(merged), cfg.file(), cfg.prefix());
}

}  // namespace mobius
