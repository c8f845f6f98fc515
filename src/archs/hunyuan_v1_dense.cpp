// HunYuan V1 (transformers/models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py,
// hunyuan_v1_moe/modular_hunyuan_v1_moe.py, 5.23).
//   hunyuan_v1_dense  Llama with per-head RMSNorms query_layernorm / key_layernorm applied after
//          RoPE, and an MLP without bias. A "dynamic" rope with an `alpha` is HunYuan's static
//          NTK-alpha rope: base = rope_theta * alpha ** (head_dim / (head_dim - 2))
//          (compute_ntk_alpha_rope_parameters).
//   hunyuan_v1_moe  the same layer with HunYuanMoEV1Moe as every layer's mlp: softmax top-k
//          (moe_topk, an int or one per layer) of num_experts, always renormalized (router
//          gate.wg), experts of intermediate_size, plus shared_mlp (intermediate_size) summed.
#include <cmath>

#include "archs/archs.h"
#include "archs/llama.h"
#include "registry/config_defaults.h"
#include "blocks/moe.h"

namespace mobius {

namespace {

DecoderSpec hunyuan_spec(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qk_norm = QKNorm{.q_name = "query_layernorm", .k_name = "key_layernorm", .after_rope = true};
  s.mlp.bias = false;
  std::optional<HfConfig> p = c.sub("rope_parameters");
  if (!p) p = c.sub("rope_scaling");
  if (p && s.rope.rope_type == "dynamic" && p->float_or("alpha", 0.0) != 0.0) {
    const double dim = static_cast<double>(s.attention.head_dim);
    s.rope.rope_type = "default";
    s.rope.rope_theta *= std::pow(p->get_float("alpha"), dim / (dim - 2.0));
  }
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_hunyuan_v1_dense(const HfConfig& c, DataType dtype) {
  return make_decoder(hunyuan_spec(c, dtype));
}

std::unique_ptr<Architecture> create_hunyuan_v1_moe(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  const HfConfig c = with_attribute_map(config, {{"num_experts_per_tok", "moe_topk"},
                                                  {"num_local_experts", "num_experts"}});
  DecoderSpec s = hunyuan_spec(c, dtype);
  MoEOptions m;
  m.hidden_size = s.hidden_size;
  m.intermediate_size = s.mlp.intermediate_size;  // HunYuanMoEV1Experts: config.intermediate_size
  m.hidden_act = s.mlp.hidden_act;
  m.dtype = dtype;
  m.router.num_experts = c.get_int("num_experts");
  m.router.norm_topk_prob = true;
  m.router_name = "gate.wg";
  m.shared_expert_name = "shared_mlp";
  m.shared_expert = s.mlp;
  // moe_topk: one top-k for every layer, or one per layer (HunYuanMoEV1Gate)
  std::vector<int64_t> top_k;
  const auto& list = c.json().contains("moe_topk") ? c.json()["moe_topk"] : nlohmann::json();
  if (list.is_array()) {
    if (static_cast<int64_t>(list.size()) != s.num_hidden_layers)
      c.fail("moe_topk", "expected an integer or one per layer (num_hidden_layers)");
    for (const auto& k : list) top_k.push_back(k.is_number_integer() ? k.get<int64_t>() : 0);
  } else {
    top_k.assign(static_cast<size_t>(s.num_hidden_layers), c.int_or("moe_topk", 1));
  }
  std::vector<FeedForwardFactory> layers;
  for (int64_t k : top_k) {
    if (k < 1 || k > m.router.num_experts)
      c.fail("moe_topk", "expected integers between 1 and num_experts (" + std::to_string(m.router.num_experts) + ")");
    m.router.top_k = k;
    layers.push_back(sparse_moe(m, s.mlp));
  }
  s.make_feed_forward = [layers](int64_t layer) { return layers.at(static_cast<size_t>(layer))(layer); };
  return make_decoder(s);
}

}  // namespace mobius
