// Ministral 3 (transformers/models/ministral3/modeling_ministral3.py): Mistral (sliding_window on
// every layer when set) with the query scaled after RoPE by
// 1 + llama_4_scaling_beta * log(1 + floor(position / original_max_position_embeddings)), both
// read from rope_parameters (without rope_parameters / rope_scaling: Ministral3Config.__post_init__'s
// yarn dict, configuration_ministral3.py).
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

DecoderSpec ministral3_spec(const HfConfig& c, DataType dtype) {
  const RopeDefaults rope{.rope_parameters = R"({
      "type": "yarn", "rope_theta": 1000000.0, "factor": 16.0, "original_max_position_embeddings": 16384,
      "beta_fast": 32.0, "beta_slow": 1.0, "mscale_all_dim": 1.0, "mscale": 1.0, "llama_4_scaling_beta": 0.1})"};
  DecoderSpec s = llama_spec(c, dtype, rope);
  s.attention.qkv_bias = s.attention.o_bias = s.mlp.bias = false;  // attention_bias, mlp_bias not read
  if (c.has("sliding_window")) {
    s.sliding_window = c.get_int("sliding_window");
    s.layer_types.assign(s.layer_types.size(), "sliding_attention");
  }
  std::optional<HfConfig> p = RopeConfig::params(c, rope);
  if (p && p->has("llama_4_scaling_beta")) {
    s.llama_4_scaling_beta = static_cast<float>(p->get_float("llama_4_scaling_beta"));
    s.llama_4_original_max_position_embeddings = p->get_int("original_max_position_embeddings");
    if (s.llama_4_original_max_position_embeddings <= 0)
      p->fail("original_max_position_embeddings", "must be positive");
  }
  return s;
}

std::unique_ptr<Architecture> create_ministral3(const HfConfig& c, DataType dtype) {
  return make_decoder(ministral3_spec(c, dtype));
}

}  // namespace mobius
