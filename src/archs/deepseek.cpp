// DeepSeek-V2 and DeepSeek-V3 (transformers/models/deepseek_v{2,3}/modeling_deepseek_v{2,3}.py,
// 5.23): multi-head latent attention (blocks/mla.h) and, from layer first_k_dense_replace on, a
// routed MoE (blocks/moe.h) plus shared_experts (n_shared_experts * moe_intermediate_size);
// the first layers keep a dense mlp (intermediate_size).
//   deepseek_v2  softmax top-k (topk_method "greedy", or "group_limited_greedy" over n_group
//                groups), * routed_scaling_factor, not renormalized; RoPE on interleaved pairs
//   deepseek_v3  sigmoid scores + e_score_correction_bias, group-limited (n_group, topk_group),
//                norm_topk_prob, * routed_scaling_factor; rope_interleave
// Softmax scale: (qk_nope_head_dim + qk_rope_head_dim) ** -0.5, times mscale ** 2 for a scaled
// RoPE with mscale_all_dim (mscale = 0.1 * mscale_all_dim * ln(factor) + 1 when factor > 1).
#include <cmath>

#include "archs/archs.h"
#include "archs/llama.h"
#include "archs/moe_config.h"

namespace mobius {
namespace {

// The decoder and its parts before the version's own options (RoPE layout, router) are set.
struct DeepseekParts {
  DecoderSpec spec;
  MLAOptions mla;
  std::optional<MoEOptions> moe;  // none when every layer is dense
  std::vector<bool> sparse;       // per layer: the MoE (from first_k_dense_replace on)

  std::unique_ptr<Architecture> make() {
    spec.make_attention = latent_attention(mla);
    if (moe) spec.make_feed_forward = sparse_moe(*moe, spec.mlp, sparse);
    return std::make_unique<DecoderCausalLM>(spec);
  }
};

DeepseekParts deepseek_parts(const HfConfig& c, DataType dtype) {
  DeepseekParts parts{llama_spec(c, dtype), {}, std::nullopt, {}};
  DecoderSpec& s = parts.spec;
  MLAOptions& a = parts.mla;
  a.hidden_size = s.hidden_size;
  a.num_heads = s.attention.num_attention_heads;
  if (s.attention.num_key_value_heads != a.num_heads)
    c.fail("num_key_value_heads", "must equal num_attention_heads: MLA expands keys and values per head");
  a.q_lora_rank = c.opt_int("q_lora_rank");
  a.kv_lora_rank = c.get_int("kv_lora_rank");
  a.qk_nope_head_dim = c.get_int("qk_nope_head_dim");
  a.qk_rope_head_dim = c.get_int("qk_rope_head_dim");
  a.v_head_dim = c.get_int("v_head_dim");
  for (const char* key : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
    if (c.get_int(key) <= 0) c.fail(key, "must be positive");
  if (a.q_lora_rank && *a.q_lora_rank <= 0) c.fail("q_lora_rank", "must be positive or null");
  if (a.qk_rope_head_dim % 2 != 0) c.fail("qk_rope_head_dim", "must be even");
  a.attention_bias = c.bool_or("attention_bias", false);
  a.dtype = dtype;
  s.rope = RopeConfig::from_hf(c, a.qk_rope_head_dim);
  double scale = 1.0 / std::sqrt(static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim));
  if (s.rope.rope_type != "default" && s.rope.mscale_all_dim != 0.0 && s.rope.factor > 1.0) {
    const double mscale = 0.1 * s.rope.mscale_all_dim * std::log(s.rope.factor) + 1.0;
    scale *= mscale * mscale;
  }
  a.scale = static_cast<float>(scale);

  // DeepseekV{2,3}DecoderLayer: the MoE from layer first_k_dense_replace on; a config where every
  // layer is dense (first_k_dense_replace >= num_hidden_layers) reads no MoE field at all
  const int64_t first_sparse = c.int_or("first_k_dense_replace", 0);
  if (first_sparse < 0) c.fail("first_k_dense_replace", "must not be negative");
  if (first_sparse >= s.num_hidden_layers) return parts;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i) parts.sparse.push_back(i >= first_sparse);
  MoEOptions m = read_moe_options(c, s, "n_routed_experts", "moe_intermediate_size");
  m.router.routed_scaling_factor = static_cast<float>(c.float_or("routed_scaling_factor", 1.0));
  const int64_t shared = c.get_int("n_shared_experts");
  if (shared < 1) c.fail("n_shared_experts", "must be positive");
  m.shared_expert_name = "shared_experts";
  m.shared_expert = s.mlp;
  m.shared_expert.intermediate_size = m.intermediate_size * shared;
  parts.moe = m;
  return parts;
}

// n_group / topk_group of a group-limited router.
void read_groups(const HfConfig& c, RouterOptions& r) {
  r.n_group = c.get_int("n_group");
  r.topk_group = c.get_int("topk_group");
  if (r.n_group < 1 || r.num_experts % r.n_group != 0) c.fail("n_group", "must divide n_routed_experts");
  if (r.topk_group < 1 || r.topk_group > r.n_group) c.fail("topk_group", "must be between 1 and n_group");
}

}  // namespace

std::unique_ptr<Architecture> create_deepseek_v2(const HfConfig& c, DataType dtype) {
  DeepseekParts p = deepseek_parts(c, dtype);
  p.mla.rope_interleave = true;  // DeepseekV2's apply_rotary_emb: complex pairs
  if (!p.moe) return p.make();
  RouterOptions& r = p.moe->router;  // softmax_topk; the V2 router ignores norm_topk_prob
  const std::string method = c.string_or("topk_method", "greedy");
  if (method == "group_limited_greedy")
    read_groups(c, r);
  else if (method != "greedy")
    c.fail("topk_method", "unsupported '" + method + "' (greedy, group_limited_greedy)");
  return p.make();
}

std::unique_ptr<Architecture> create_deepseek_v3(const HfConfig& c, DataType dtype) {
  DeepseekParts p = deepseek_parts(c, dtype);
  p.mla.rope_interleave = c.bool_or("rope_interleave", true);
  p.spec.mlp.bias = false;  // DeepseekV3MLP: no mlp_bias
  if (!p.moe) return p.make();
  p.moe->shared_expert.bias = false;
  RouterOptions& r = p.moe->router;
  r.kind = RouterKind::sigmoid_groups;
  r.norm_topk_prob = c.bool_or("norm_topk_prob", true);
  read_groups(c, r);
  if (r.num_experts / r.n_group < 2) c.fail("n_group", "needs at least two experts per group");
  return p.make();
}

}  // namespace mobius
