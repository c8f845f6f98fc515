#include "driver/generic.h"

#include "util/error.h"

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

bool moe_like(const HfConfig& c) { return c.has("num_local_experts") || c.has("num_experts"); }

std::string generic_decoder_name(const HfConfig& c) {
  return moe_like(c) ? "generic MoE decoder" : "generic Llama decoder";
}

UnsupportedField unsupported_moe_field(const HfConfig& c) {
  for (const char* f : {"shared_expert_intermediate_size", "n_shared_experts", "num_shared_experts",
                        "moe_num_shared_experts", "shared_intermediate_size"})
    if (c.has(f) && c.get_float(f) != 0.0) return {f, "a shared expert"};
  for (const char* f : {"n_group", "topk_group"})
    if (c.has(f) && c.get_int(f) != 1) return {f, "group-limited routing"};
  if (c.has("routed_scaling_factor") && c.get_float("routed_scaling_factor") != 1.0)
    return {"routed_scaling_factor", "a routed scaling factor other than 1"};
  if (c.has("scoring_func") && c.get_string("scoring_func") != "softmax")
    return {"scoring_func", "a router scoring function other than softmax"};
  if (c.has("topk_method") && c.get_string("topk_method") != "greedy")
    return {"topk_method", "a top-k method other than greedy"};
  if (c.has("first_k_dense_replace") && c.get_int("first_k_dense_replace") != 0)
    return {"first_k_dense_replace", "dense leading layers"};
  if (c.has("moe_latent_size")) return {"moe_latent_size", "latent experts"};
  return {};
}

namespace {

bool has_key(const std::vector<std::string>& names, const std::string& part, const std::string& suffix) {
  for (const std::string& n : names)
    if (n.find(part) != std::string::npos && n.size() >= suffix.size() &&
        n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  return false;
}

}  // namespace

GenericMoEShape generic_moe_shape(const std::vector<std::string>& names, const HfConfig& c) {
  GenericMoEShape shape;
  shape.qk_norm = has_key(names, ".self_attn.q_norm.", ".weight");
  if (has_key(names, ".block_sparse_moe.experts.", ".w1.weight"))
    shape.experts = GenericExperts::block_sparse_moe;
  else if (has_key(names, ".mlp.experts.", ".gate_proj.weight"))
    shape.experts = GenericExperts::per_expert;
  else if (has_key(names, ".mlp.experts.gate_up_proj", "gate_up_proj"))
    shape.experts = GenericExperts::stacked;
  else
    c.fail(c.has("num_local_experts") ? "num_local_experts" : "num_experts",
           "names experts, and the checkpoint has none in a layout the generic MoE decoder reads "
           "(model.layers.N.block_sparse_moe.experts.E.w1, mlp.experts.E.gate_proj or mlp.experts.gate_up_proj)");
  return shape;
}

}  // namespace mobius
