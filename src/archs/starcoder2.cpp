// StarCoder2 (transformers/models/starcoder2/modeling_starcoder2.py): Mistral-shaped attention
// with LayerNorms (bias, eps norm_epsilon) and a non-gated MLP c_fc -> hidden_act -> c_proj;
// use_bias (default true) gives every projection a bias; sliding_window, when set, on every layer.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_starcoder2(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.norm_kind = NormKind::LayerNorm;
  s.norm_eps = static_cast<float>(c.float_or("norm_epsilon", 1e-5));
  const bool bias = c.bool_or("use_bias", true);
  s.attention.qkv_bias = s.attention.o_bias = bias;
  s.mlp.bias = bias;
  s.mlp.gated = false;
  s.mlp.up_name = "c_fc";
  s.mlp.down_name = "c_proj";
  if (c.has("sliding_window")) {
    s.sliding_window = c.get_int("sliding_window");
    s.layer_types.assign(s.layer_types.size(), "sliding_attention");
  }
  return make_decoder(s);
}

}  // namespace mobius
