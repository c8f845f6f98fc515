#include "driver/generic.h"

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

UnsupportedField unsupported_llama_field(const HfConfig& c) {
  if (c.has("sliding_window") && c.bool_or("use_sliding_window", true))
    return {"sliding_window", "sliding-window attention"};
  if (c.has("layer_types"))
    for (const auto& t : c.json().at("layer_types"))
      if (!t.is_string() || t.get<std::string>() != "full_attention") return {"layer_types", "per-layer attention types"};
  for (const char* f : {"attn_logit_softcapping", "final_logit_softcapping"})
    if (c.has(f)) return {f, "logit soft-capping"};
  for (const char* f : {"embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling",
                        "logit_scale", "scale_emb", "scale_depth"})
    if (c.has(f) && c.get_float(f) != 1.0) return {f, "a scale other than 1"};
  return {};
}

}  // namespace mobius
