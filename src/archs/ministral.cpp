// Ministral (transformers/models/ministral/modular_ministral.py): Qwen2's layer without the q/k/v
// bias, i.e. Llama, with per-layer sliding windows from layer_types (default: every layer slides
// when sliding_window is set, MistralConfig's default being 4096).
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_ministral(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qkv_bias = s.attention.o_bias = s.mlp.bias = false;  // attention_bias, mlp_bias not read
  const bool absent = !c.json().contains("sliding_window");
  if (!c.has("layer_types") && (absent || c.has("sliding_window")))
    s.layer_types.assign(s.layer_types.size(), "sliding_attention");
  read_layer_types(c, s, 4096);
  return make_decoder(s);
}

}  // namespace mobius
