// HunYuan V3 (transformers/models/hy_v3/{modular,configuration}_hy_v3.py, HYV3Config, 5.23): the
// Llama pre-norm layer with ApertusAttention (per-head q_norm / k_norm RMSNorms before RoPE,
// q/k/v/o bias per attention_bias; rope_theta default_theta 11158840), LlamaMLP (mlp_bias) on the
// layers mlp_layer_types calls "dense" (default: layer 0), and on the "sparse" ones MiniMax-M2's
// block as HYV3MoE: sigmoid scores + the block's e_score_correction_bias pick the top
// num_experts_per_tok, weighted by the sigmoid scores renormalized (+ 1e-20) and times
// router_scaling_factor (HYV3TopKRouter: the DeepSeek-V3 router with one group); the experts
// (Qwen3MoeExperts, saved per expert) plus the shared experts, a LlamaMLP of
// moe_intermediate_size * num_shared_experts (HYV3MLP: intermediate_size when that is 0).
// enable_moe_fp32_combine adds the shared experts in float32; the graph adds them in the model dtype.
#include <algorithm>

#include "archs/archs.h"
#include "archs/layer_types.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {

std::unique_ptr<Architecture> create_hy_v3(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qk_norm = QKNorm{};  // ApertusRMSNorm(head_dim) for q and k
  std::vector<std::string> fallback(static_cast<size_t>(s.num_hidden_layers), "sparse");
  if (!fallback.empty()) fallback[0] = "dense";  // HYV3Config.__post_init__
  std::vector<bool> sparse;
  for (const auto& t : read_layer_list(c, "mlp_layer_types", s.num_hidden_layers, {"dense", "sparse"}, fallback))
    sparse.push_back(t == "sparse");
  if (std::find(sparse.begin(), sparse.end(), true) == sparse.end()) return make_decoder(s);
  MoEOptions m = read_moe_options(c, s, "num_experts", "moe_intermediate_size");
  set_one_group_sigmoid_router(c, m, c.float_or("router_scaling_factor", 2.826));
  // the checkpoint names save_pretrained writes (transformers' conversion mapping reversed):
  // router.gate, expert_bias (e_score_correction_bias), experts.{e}.gate_proj / up_proj /
  // down_proj, shared_mlp
  m.router_name = "router.gate";
  m.score_bias_name = "expert_bias";
  const int64_t shared = c.int_or("num_shared_experts", 1);
  if (shared < 0) c.fail("num_shared_experts", "must not be negative");
  m.shared_expert_name = "shared_mlp";
  m.shared_expert = s.mlp;  // LlamaMLP: mlp_bias, hidden_act
  m.shared_expert.intermediate_size = shared > 0 ? m.intermediate_size * shared : s.mlp.intermediate_size;
  s.make_feed_forward = sparse_moe(m, s.mlp, sparse);
  return make_decoder(s);
}

}  // namespace mobius
