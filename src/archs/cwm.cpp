// CWM (transformers/models/cwm/modular_cwm.py): Llama without any attention bias and with
// per-layer sliding windows from layer_types (default: every 4th layer from layer 0 full, the
// others sliding_window).
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_cwm(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.attention.qkv_bias = s.attention.o_bias = false;
  if (!c.has("layer_types"))
    for (size_t i = 0; i < s.layer_types.size(); ++i)
      if (i % 4 != 0) s.layer_types[i] = "sliding_attention";
  read_layer_types(c, s);
  for (const auto& t : s.layer_types)
    if (t == "sliding_attention") s.sliding_window = c.int_or("sliding_window", 8192);
  return make_decoder(s);
}

}  // namespace mobius
