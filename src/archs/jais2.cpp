// Jais 2 (transformers/models/jais2/modular_jais2.py): Llama with LayerNorms (bias, eps
// layer_norm_eps) and a non-gated MLP up_proj -> hidden_act (relu2) -> down_proj (NemotronMLP);
// attention_bias and mlp_bias default to true.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_jais2(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.norm_kind = NormKind::LayerNorm;
  s.norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-5));
  s.attention.qkv_bias = s.attention.o_bias = c.bool_or("attention_bias", true);
  s.mlp.bias = c.bool_or("mlp_bias", true);
  s.mlp.gated = false;
  s.mlp.up_name = "up_proj";
  s.mlp.down_name = "down_proj";
  return make_decoder(s);
}

}  // namespace mobius
