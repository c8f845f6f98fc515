#include "archs/moe_config.h"

#include "archs/llama.h"

namespace mobius {

MoEOptions read_moe_options(const HfConfig& c, const DecoderSpec& s, const std::string& experts_key,
                            const std::string& intermediate_key, const std::string& top_k_key) {
  MoEOptions m;
  m.hidden_size = s.hidden_size;
  m.hidden_act = s.mlp.hidden_act;
  m.dtype = s.dtype;
  m.intermediate_size = c.get_int(intermediate_key);
  if (m.intermediate_size <= 0) c.fail(intermediate_key, "must be positive");
  const bool alias = experts_key == "num_local_experts" && !c.has(experts_key) && c.has("num_experts");
  const std::string key = alias ? "num_experts" : experts_key;
  m.router.num_experts = c.get_int(key);
  if (m.router.num_experts < 1) c.fail(key, "must be positive");
  m.router.top_k = c.get_int(top_k_key);
  if (m.router.top_k < 1 || m.router.top_k > m.router.num_experts)
    c.fail(top_k_key, "must be between 1 and " + key + " (" +
                                      std::to_string(m.router.num_experts) + ")");
  return m;
}

std::vector<bool> read_sparse_layers(const HfConfig& c, int64_t num_hidden_layers) {
  const int64_t step = c.int_or("decoder_sparse_step", 1);
  if (step < 1) c.fail("decoder_sparse_step", "must be positive");
  std::vector<bool> sparse;
  for (int64_t i = 0; i < num_hidden_layers; ++i) sparse.push_back((i + 1) % step == 0);
  if (c.has("mlp_only_layers")) {
    const auto& list = c.json()["mlp_only_layers"];
    if (!list.is_array()) c.fail("mlp_only_layers", "expected a list of layer indices");
    for (const auto& i : list) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= num_hidden_layers)
        c.fail("mlp_only_layers", "expected layer indices below num_hidden_layers");
      sparse[static_cast<size_t>(i.get<int64_t>())] = false;
    }
  }
  return sparse;
}

MoEOptions read_deepseek_experts(const HfConfig& c, const DecoderSpec& s, const std::string& experts_key,
                                 const std::string& shared_key) {
  MoEOptions m = read_moe_options(c, s, experts_key, "moe_intermediate_size");
  m.router.routed_scaling_factor = static_cast<float>(c.float_or("routed_scaling_factor", 1.0));
  const int64_t shared = c.get_int(shared_key);
  if (shared < 1) c.fail(shared_key, "must be positive");
  add_shared_experts(m, s.mlp, shared);
  return m;
}

void add_shared_experts(MoEOptions& m, const MLPOptions& mlp, int64_t count, const std::string& name) {
  if (count == 0) return;
  m.shared_expert_name = name;
  m.shared_expert = mlp;
  m.shared_expert.intermediate_size = m.intermediate_size * count;
}

void set_shared_expert(const HfConfig& c, MoEOptions& m, const MLPOptions& mlp, std::optional<int64_t> default_size) {
  m.shared_expert_name = "shared_expert";
  m.shared_expert = mlp;
  m.shared_expert.intermediate_size = default_size ? c.int_or("shared_expert_intermediate_size", *default_size)
                                                   : c.get_int("shared_expert_intermediate_size");
  if (m.shared_expert.intermediate_size < 1 || m.shared_expert.intermediate_size > kMaxFfnSize)
    c.fail("shared_expert_intermediate_size", "expected 1 to " + std::to_string(kMaxFfnSize));
}

std::optional<DeepseekMoE> read_deepseek_moe(const HfConfig& c, const DecoderSpec& s) {
  // a config where every layer is dense (first_k_dense_replace >= num_hidden_layers) reads no MoE
  // field at all
  const int64_t first_sparse = c.int_or("first_k_dense_replace", 0);
  if (first_sparse < 0) c.fail("first_k_dense_replace", "must not be negative");
  if (first_sparse >= s.num_hidden_layers) return std::nullopt;
  DeepseekMoE out;
  for (int64_t i = 0; i < s.num_hidden_layers; ++i) out.sparse.push_back(i >= first_sparse);
  out.moe = read_deepseek_experts(c, s);
  return out;
}

void read_groups(const HfConfig& c, RouterOptions& r) {
  r.n_group = c.int_or("n_group", 1);  // absent: the config class' default (GlmMoeDsaConfig's 1)
  r.topk_group = c.int_or("topk_group", 1);
  if (r.n_group < 1 || r.num_experts % r.n_group != 0) c.fail("n_group", std::to_string(r.n_group) + " must divide n_routed_experts " + std::to_string(r.num_experts));
  if (r.topk_group < 1 || r.topk_group > r.n_group) c.fail("topk_group", "must be between 1 and n_group");
}

void read_v3_router(const HfConfig& c, MoEOptions& m, bool norm_topk_prob) {
  m.shared_expert.bias = false;
  RouterOptions& r = m.router;
  r.kind = RouterKind::sigmoid_groups;
  r.norm_topk_prob = c.bool_or("norm_topk_prob", norm_topk_prob);
  read_groups(c, r);
  if (r.num_experts / r.n_group < 2) c.fail("n_group", "needs at least two experts per group");
}

void set_one_group_sigmoid_router(const HfConfig& c, MoEOptions& m, double routed_scaling_factor) {
  RouterOptions& r = m.router;
  r.kind = RouterKind::sigmoid_groups;  // n_group = topk_group = 1
  r.norm_topk_prob = true;
  r.routed_scaling_factor = static_cast<float>(routed_scaling_factor);
  if (r.num_experts < 2) c.fail("num_experts", "the sigmoid router needs at least 2 experts");
}

std::unique_ptr<Architecture> make_v3_moe_decoder(const HfConfig& c, DecoderSpec s, bool norm_topk_prob) {
  std::optional<DeepseekMoE> m = read_deepseek_moe(c, s);
  if (!m) return make_decoder(s);
  read_v3_router(c, m->moe, norm_topk_prob);
  s.make_feed_forward = sparse_moe(m->moe, s.mlp, m->sparse);
  return make_decoder(s);
}

}  // namespace mobius
