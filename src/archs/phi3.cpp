// Phi-3 (transformers/models/phi3/modeling_phi3.py, Phi3Config): the Llama layer with fused
// projections, split in the graph: self_attn.qkv_proj = [q | k | v] and mlp.gate_up_proj =
// [gate | up], no biases; RMSNorm (rms_norm_eps); RoPE with optional partial_rotary_factor and
// longrope (short/long factors, the top-level original_max_position_embeddings); sliding_window
// on every layer when set. Phi3Config.convert_rope_params_to_dict (configuration_phi3.py) reads
// the legacy rope types "su" and "yarn" as longrope, and rope_scaling in place of
// rope_parameters when both are set; partial_rotary_factor defaults to 1.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/decoder.h"

namespace mobius {

namespace {

// Phi3Config.convert_rope_params_to_dict: `rope_scaling or rope_parameters`, so a rope_scaling
// dict replaces rope_parameters (which RopeConfig would read first).
HfConfig rope_scaling_first(const HfConfig& c) {
  if (!c.has("rope_scaling")) return c;
  nlohmann::json j = c.json();
  j.erase("rope_parameters");
  return HfConfig(std::move(j), c.file(), c.prefix());
}

}  // namespace

DecoderSpec phi3_spec(const HfConfig& config, DataType dtype) {
  const HfConfig c = rope_scaling_first(config);
  DecoderSpec s = decoder_sizes(c, dtype, 1e-5);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  AttentionOptions& a = s.attention = read_attention(c, s.hidden_size, dtype);
  a.fused_qkv = FusedQKV{.name = "qkv_proj"};
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "silu"),
           false, dtype};
  s.mlp.fused_gate_up = true;
  s.rope = RopeConfig::from_hf(c, a.head_dim, {.partial_rotary_factor = 1.0,
                                               .rope_type_aliases = {{"su", "longrope"}, {"yarn", "longrope"}}});
  if (s.rope.rope_type != "default" && s.rope.rope_type != "longrope")  // Phi3Config.validate_rope
    c.fail("rope_parameters", "Phi-3 takes rope_type default or longrope (su, yarn), not '" + s.rope.rope_type + "'");
  const bool sliding = c.has("sliding_window");
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), sliding ? "sliding_attention" : "full_attention");
  if (sliding) s.sliding_window = c.get_int("sliding_window");
  return s;
}

std::unique_ptr<Architecture> create_phi3(const HfConfig& c, DataType dtype) {
  return std::make_unique<DecoderCausalLM>(phi3_spec(c, dtype));
}

}  // namespace mobius
