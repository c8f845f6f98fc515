#include "package/generic.h"

namespace mobius {

const std::vector<std::string>& llama_like_fields() {
  static const std::vector<std::string> fields = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                                  "intermediate_size", "vocab_size", "rms_norm_eps"};
  return fields;
}

std::vector<std::string> missing_llama_fields(const HfConfig& config) {
  std::vector<std::string> missing;
  for (const auto& f : llama_like_fields())
    if (!config.has(f)) missing.push_back(f);
  return missing;
}

}  // namespace mobius
