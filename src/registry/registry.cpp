#include "registry/registry.h"

#include <algorithm>

#include "util/error.h"
#include "weights/weight_plan.h"

namespace mobius {

const std::vector<RegistryEntry>& registry() {
  static const std::vector<RegistryEntry> table = [] {
    std::vector<RegistryEntry> t = {
        {"llama", "llama", "text-generation", create_llama},
        {"mistral", "llama", "text-generation", create_mistral},
        {"qwen2", "llama", "text-generation", create_qwen2},
        {"qwen3", "llama", "text-generation", create_qwen3},
    };
    std::sort(t.begin(), t.end(), [](const RegistryEntry& a, const RegistryEntry& b) {
      return std::string(a.model_type) < b.model_type;
    });
    return t;
  }();
  return table;
}

const RegistryEntry& find_architecture(const std::string& model_type, const std::string& config_file) {
  std::vector<std::string> names;
  for (const auto& e : registry()) {
    if (model_type == e.model_type) return e;
    names.push_back(e.model_type);
  }
  std::string msg = config_file + ": field 'model_type': unknown model type '" + model_type + "'";
  auto near = nearest_names(model_type, names);
  msg += " (nearest:";
  for (const auto& n : near) msg += " " + n;
  msg += "; see `mobius list models`)";
  throw Error(msg);
}

}  // namespace mobius
