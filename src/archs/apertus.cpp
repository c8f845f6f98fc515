// Apertus (transformers/models/apertus/modular_apertus.py): Llama with per-head q_norm / k_norm
// before RoPE, pre-norms named attention_layernorm / feedforward_layernorm, and a non-gated MLP
// up_proj -> hidden_act -> down_proj without bias; hidden_act "xielu" carries learned parameters
// (mlp.act_fn.alpha_p / alpha_n, see blocks/activation.h).
// RoPE without rope_parameters / rope_scaling: ApertusConfig.__post_init__'s llama3 dict
// (configuration_apertus.py; its rope_theta wins over a top-level one).
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_apertus(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype, {.rope_parameters = R"({
      "rope_type": "llama3", "rope_theta": 12000000.0, "factor": 8.0,
      "original_max_position_embeddings": 8192, "low_freq_factor": 1.0, "high_freq_factor": 4.0})"});
  s.names.input_layernorm = "attention_layernorm";
  s.names.post_attention_layernorm = "feedforward_layernorm";
  s.attention.qk_norm = QKNorm{};
  s.mlp.gated = false;
  s.mlp.up_name = "up_proj";
  s.mlp.down_name = "down_proj";
  s.mlp.bias = false;
  return make_decoder(s);
}

}  // namespace mobius
