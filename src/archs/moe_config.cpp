#include "archs/moe_config.h"

namespace mobius {

MoEOptions read_moe_options(const HfConfig& c, const DecoderSpec& s, const std::string& experts_key,
                            const std::string& intermediate_key) {
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
  m.router.top_k = c.get_int("num_experts_per_tok");
  if (m.router.top_k < 1 || m.router.top_k > m.router.num_experts)
    c.fail("num_experts_per_tok", "must be between 1 and " + key + " (" +
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

}  // namespace mobius
