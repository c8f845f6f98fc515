// CWM (transformers/models/cwm/modular_cwm.py): Llama without any attention bias and with
// per-layer sliding windows from layer_types (default: every 4th layer from layer 0 full, the
// others sliding_window).
// RoPE without rope_parameters / rope_scaling: CwmConfig.__post_init__'s llama3 dict
// (configuration_cwm.py).
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_cwm(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype, {.rope_parameters = R"({
      "rope_type": "llama3", "rope_theta": 1000000.0, "factor": 16.0, "high_freq_factor": 4.0,
      "low_freq_factor": 1.0, "original_max_position_embeddings": 8192})"});
  s.attention.qkv_bias = s.attention.o_bias = false;
  if (!c.has("layer_types"))
    for (size_t i = 0; i < s.layer_types.size(); ++i)
      if (i % 4 != 0) s.layer_types[i] = "sliding_attention";
  read_layer_types(c, s, 8192);  // CwmConfig.sliding_window
  return make_decoder(s);
}

}  // namespace mobius
