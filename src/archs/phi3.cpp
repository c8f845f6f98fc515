// Phi-3 (transformers/models/phi3/modeling_phi3.py, Phi3Config): the Llama layer with fused
// projections, split in the graph: self_attn.qkv_proj = [q | k | v] and mlp.gate_up_proj =
// [gate | up], no biases; RMSNorm (rms_norm_eps); RoPE with optional partial_rotary_factor and
// longrope (short/long factors, the top-level original_max_position_embeddings); sliding_window
// on every layer when set.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_phi3(const HfConfig& c, DataType dtype) {
  DecoderSpec s = decoder_sizes(c, dtype, 1e-5);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  AttentionOptions& a = s.attention = read_attention(c, s.hidden_size, dtype);
  a.fused_qkv = FusedQKV{.name = "qkv_proj"};
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "silu"),
           false, dtype};
  s.mlp.fused_gate_up = true;
  s.rope = RopeConfig::from_hf(c, a.head_dim);
  const bool sliding = c.has("sliding_window");
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), sliding ? "sliding_attention" : "full_attention");
  if (sliding) s.sliding_window = c.get_int("sliding_window");
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
