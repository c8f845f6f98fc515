// Laguna (transformers/models/laguna/{modular,configuration}_laguna.py, LagunaConfig, 5.23): the
// Llama pre-norm layer (Glm4MoeLiteDecoderLayer) with
//   attention: LagunaAttention (AfmoeAttention's): num_attention_heads_per_layer[i] query heads
//     (default num_attention_heads), q/k/v/o bias per attention_bias, per-head q_norm / k_norm
//     RMSNorms before RoPE, the window sliding_window on the "sliding_attention" layers, and the
//     heads' output times softplus(g_proj(x)) (no bias; one gate per head broadcast over head_dim
//     when gating is true or "per-head", one per channel otherwise) before o_proj
//   RoPE per layer type (rope_parameters nested by layer type; without it the class default: full
//     layers theta 500000 on half the head, sliding ones theta 10000 on all of it; an entry without
//     partial_rotary_factor rotates all of it)
//   mlp: per mlp_layer_types (default: layer 0 "dense", the others "sparse"): a gated MLP of
//     intermediate_size (no bias), or LagunaSparseMoeBlock: the router gate scores sigmoid of its
//     float32 logits (tanh-softcapped by moe_router_logit_softcapping when > 0), picks the top
//     num_experts_per_tok of scores + gate.e_score_correction_bias, weights them by their scores
//     renormalized (no epsilon), the experts (Qwen3MoeExperts of moe_intermediate_size) times
//     moe_routed_scaling_factor, plus shared_experts, a gated MLP of shared_expert_intermediate_size.
// moe_apply_router_weight_on_input true is refused by transformers (validate_architecture).
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"
#include "blocks/spec_check.h"

namespace mobius {

std::unique_ptr<Architecture> create_laguna(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.mlp.bias = false;  // LagunaMLP = Qwen2MoeMLP
  s.attention.qk_norm = QKNorm{};  // LagunaRMSNorm(head_dim) for q and k
  s.attention.output_gate = "g_proj";
  s.attention.output_gate_act = GateActivation::softplus;
  const nlohmann::json gating = c.json().contains("gating") ? c.json()["gating"] : nlohmann::json(true);
  if (!gating.is_boolean() && !(gating.is_string() && (gating == "per-head" || gating == "per-element")))
    c.fail("gating", "expected true, false, \"per-head\" or \"per-element\"");
  s.attention.output_gate_per_head = gating == true || gating == "per-head";
  if (c.bool_or("moe_apply_router_weight_on_input", false))
    c.fail("moe_apply_router_weight_on_input", "true is not supported by transformers' Laguna");
  const int64_t n = s.num_hidden_layers;
  s.layer_types = read_layer_types(c, n, std::vector<std::string>(static_cast<size_t>(n), "full_attention"));
  if (std::find(s.layer_types.begin(), s.layer_types.end(), "sliding_attention") != s.layer_types.end()) {
    s.sliding_window = c.int_or("sliding_window", 512);
    if (s.sliding_window < 1) c.fail("sliding_window", "must be positive");
  }
  read_nested_layer_type_rope(c, s, {.rope_theta = 500000.0, .partial_rotary_factor = 0.5},
                              {.rope_theta = 10000.0, .partial_rotary_factor = 1.0});  // LagunaConfig.__post_init__
  std::vector<int64_t> heads(static_cast<size_t>(n), s.attention.num_attention_heads);
  if (c.has("num_attention_heads_per_layer")) {
    const auto& list = c.json()["num_attention_heads_per_layer"];
    if (!list.is_array() || list.size() != static_cast<size_t>(n))
      c.fail("num_attention_heads_per_layer", "expected a list of num_hidden_layers head counts");
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_number_integer() || list[i].get<int64_t>() < 1 ||
          list[i].get<int64_t>() % s.attention.num_key_value_heads != 0)
        c.fail("num_attention_heads_per_layer", "expected positive multiples of num_key_value_heads");
      heads[i] = list[i].get<int64_t>();
    }
  }
  for (int64_t h : heads) {
    AttentionOptions a = s.attention;
    a.num_attention_heads = h;
    check_attention(a);
  }
  const AttentionOptions attention = s.attention;
  const std::vector<std::string> types = s.layer_types;
  const int64_t window = s.sliding_window;
  s.make_attention = [attention, heads, types, window](int64_t layer) {
    AttentionOptions a = attention;
    a.num_attention_heads = heads[static_cast<size_t>(layer)];
    if (types[static_cast<size_t>(layer)] == "sliding_attention") a.sliding_window = window;
    return std::make_unique<Attention>(a);
  };
  std::vector<std::string> fallback(static_cast<size_t>(n), "sparse");
  if (!fallback.empty()) fallback[0] = "dense";
  std::vector<bool> sparse;
  for (const auto& t : read_layer_list(c, "mlp_layer_types", n, {"dense", "sparse"}, fallback))
    sparse.push_back(t == "sparse");
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_moe_options(c, s, "num_experts", "moe_intermediate_size");
  set_one_group_sigmoid_router(c, m, c.float_or("moe_routed_scaling_factor", 1.0));
  m.router.norm_topk_eps = 0.0;  // LagunaTopKRouter divides by the sum alone
  m.router.logit_softcapping = static_cast<float>(c.float_or("moe_router_logit_softcapping", 0.0));
  if (m.router.logit_softcapping < 0.0f) c.fail("moe_router_logit_softcapping", "must not be negative");
  // the checkpoint names save_pretrained writes (transformers' qwen2_moe conversion mapping
  // reversed): experts.{e}.gate_proj / up_proj / down_proj, experts.e_score_correction_bias,
  // shared_expert
  m.score_bias_name = "experts.e_score_correction_bias";
  set_shared_expert(c, m, s.mlp, 512);
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
