// EXAONE 4 (transformers/models/exaone4/modeling_exaone4.py): post-norm layers like OLMo 2
// (post_attention_layernorm after self_attn, post_feedforward_layernorm after mlp), per-head
// q_norm / k_norm before RoPE, no bias anywhere. layer_types (default: every
// sliding_window_pattern-th layer full, the others sliding) selects the mask; when sliding_window
// is set only the sliding layers apply RoPE (the full-attention layers are NoPE). Exaone4Config:
// sliding_window 4096 and sliding_window_pattern 4 when config.json has none.
#include "archs/archs.h"
#include "archs/llama.h"

namespace mobius {

std::unique_ptr<Architecture> create_exaone4(const HfConfig& c, DataType dtype) {
  DecoderSpec s = llama_spec(c, dtype);
  s.names.input_layernorm = s.names.post_attention_layernorm = "";
  s.topology = LayerTopology::sandwich;
  s.names.attn_output_norm = "post_attention_layernorm";
  s.names.mlp_output_norm = "post_feedforward_layernorm";
  s.attention.qk_norm = QKNorm{};
  s.attention.qkv_bias = s.attention.o_bias = false;
  s.mlp.bias = false;
  const bool sliding = !c.json().contains("sliding_window") || c.has("sliding_window");
  if (sliding && !c.has("layer_types")) {
    const int64_t pattern = c.int_or("sliding_window_pattern", 4);
    if (pattern <= 0) c.fail("sliding_window_pattern", "must be a positive integer");
    for (int64_t i = 0; i < s.num_hidden_layers; ++i)
      if ((i + 1) % pattern != 0) s.layer_types[static_cast<size_t>(i)] = "sliding_attention";
  }
  read_layer_types(c, s, 4096);
  for (const auto& t : s.layer_types) {
    if (sliding) s.layer_uses_rope.push_back(t == "sliding_attention");
  }
  return make_decoder(s);
}

}  // namespace mobius
