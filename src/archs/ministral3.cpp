// Ministral 3 (transformers/models/ministral3/modeling_ministral3.py): Mistral (sliding_window on
// every layer when set) with the query scaled after RoPE by
// 1 + llama_4_scaling_beta * log(1 + floor(position / original_max_position_embeddings)), both
// read from rope_parameters (its default rope is yarn).
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_ministral3(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qkv_bias = s.attention.o_bias = false;
  if (c.has("sliding_window")) {
    s.sliding_window = c.get_int("sliding_window");
    s.layer_types.assign(s.layer_types.size(), "sliding_attention");
  }
  std::optional<HfConfig> p = c.sub("rope_parameters");
  if (!p) p = c.sub("rope_scaling");
  if (p && p->has("llama_4_scaling_beta")) {
    s.llama_4_scaling_beta = static_cast<float>(p->get_float("llama_4_scaling_beta"));
    s.llama_4_original_max_position_embeddings = p->get_int("original_max_position_embeddings");
    if (s.llama_4_original_max_position_embeddings <= 0)
      p->fail("original_max_position_embeddings", "must be positive");
  }
  return make_decoder(s);
}

}  // namespace mobius
