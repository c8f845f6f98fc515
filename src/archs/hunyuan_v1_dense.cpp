// HunYuan dense V1 (transformers/models/hunyuan_v1_dense/modular_hunyuan_v1_dense.py): Llama with
// per-head RMSNorms query_layernorm / key_layernorm applied after RoPE, and an MLP without bias.
// A "dynamic" rope with an `alpha` is HunYuan's static NTK-alpha rope:
// base = rope_theta * alpha ** (head_dim / (head_dim - 2)) (compute_ntk_alpha_rope_parameters).
#include <cmath>

#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_hunyuan_v1_dense(const HfConfig& c, DataType dtype) {
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
  return make_decoder(s);
}

}  // namespace mobius
