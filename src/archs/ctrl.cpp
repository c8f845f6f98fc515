// CTRL (transformers/models/ctrl/modeling_ctrl.py, configuration_ctrl.py): transformer.w(ids) *
// sqrt(n_embd) + pos_encoding[position_ids], a fixed sinusoidal table of n_positions rows in
// Marian's layout ([sin of the even angles | cos of the odd ones], positional_encoding; not in the
// checkpoint) -> transformer.h (pre-norm EncoderLayer): layernorm1 (eps 1e-6), multi_head_attention
// (Wq, Wk, Wv, dense, with biases; scale head_dim**-0.5), layernorm2 (eps 1e-6), ffn.0 -> relu ->
// ffn.2 -> transformer.layernorm (layer_norm_epsilon) -> lm_head (with a bias; its weight tied to
// transformer.w by default). token_type_ids are not an input of the package. The table's angles
// are float32, as positional_encoding computes them (sinusoidal_positions_f32).
#include <cmath>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"
#include "blocks/sinusoidal_position.h"
#include "blocks/spec_check.h"
#include "registry/config_defaults.h"

namespace mobius {

std::unique_ptr<Architecture> create_ctrl(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  const HfConfig c = with_attribute_map(config, {{"max_position_embeddings", "n_positions"},
                                                  {"hidden_size", "n_embd"},
                                                  {"num_attention_heads", "n_head"},
                                                  {"num_hidden_layers", "n_layer"}});
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, "n_embd", "n_layer")};
  DecoderSpec& s = g.decoder;
  s.norm_eps = static_cast<float>(c.float_or("layer_norm_epsilon", 1e-6));
  s.layer_norm_eps = 1e-6f;  // EncoderLayer's layernorm1 / layernorm2
  s.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(s.hidden_size)));
  s.lm_head_bias = true;
  const int64_t rows = c.get_int("n_positions");
  check_position_table("n_positions", rows);
  g.fixed_positions = [rows, dim = s.hidden_size, dtype](Ops& op, Value* position_ids) {
    return sinusoidal_positions_f32(op, position_ids, rows, dim, dtype);
  };
  s.names = {.model = "transformer", .embed_tokens = "w", .layers = "h", .norm = "layernorm",
             .self_attn = "multi_head_attention", .mlp = "ffn", .input_layernorm = "layernorm1",
             .post_attention_layernorm = "layernorm2"};
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_attention_heads = "n_head", .num_key_value_heads = nullptr, .head_dim = nullptr});
  a.qkv_bias = a.o_bias = true;
  a.names = {.q_proj = "Wq", .k_proj = "Wk", .v_proj = "Wv", .o_proj = "dense"};
  s.mlp = {s.hidden_size, c.get_int("dff"), "relu", true, dtype, /*gated=*/false, /*fused_gate_up=*/false, "0", "2"};
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
