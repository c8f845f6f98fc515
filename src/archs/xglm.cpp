// XGLM (transformers/models/xglm/modeling_xglm.py, configuration_xglm.py): model.embed_tokens(ids)
// * sqrt(d_model) (scale_embedding) + embed_positions(position_ids + 2), a fixed tensor2tensor
// sinusoidal table of max_position_embeddings + 2 rows whose row pad_token_id is zero
// (XGLMSinusoidalPositionalEmbedding, not in the checkpoint) -> model.layers (pre-norm):
// self_attn_layer_norm, self_attn ({q,k,v,out}_proj with biases, q scaled by head_dim**-0.5),
// final_layer_norm, fc1 -> activation_function -> fc2 -> model.layer_norm -> lm_head (tied to
// embed_tokens by default). Sizes: d_model, num_layers, attention_heads, ffn_dim; every LayerNorm
// has nn.LayerNorm's default eps 1e-5. add_cross_attention (an encoder-decoder use) is rejected.
#include <cmath>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"
#include "blocks/sinusoidal_position.h"
#include "blocks/spec_check.h"
#include "registry/config_defaults.h"

namespace mobius {

std::unique_ptr<Architecture> create_xglm(const HfConfig& config, DataType dtype) {
  // the config class' attribute_map: an alias in config.json sets the field it names
  const HfConfig c = with_attribute_map(config, {{"num_attention_heads", "attention_heads"},
                                                  {"hidden_size", "d_model"},
                                                  {"num_hidden_layers", "num_layers"}});
  if (c.bool_or("add_cross_attention", false))
    c.fail("add_cross_attention", "cross-attention is not supported for text generation");
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, "d_model", "num_layers")};
  DecoderSpec& s = g.decoder;
  s.norm_eps = 1e-5f;
  if (c.bool_or("scale_embedding", true))
    s.embed_scale = static_cast<float>(std::sqrt(static_cast<double>(s.hidden_size)));
  const int64_t rows = c.get_int("max_position_embeddings") + 2;
  check_position_table("max_position_embeddings", rows);
  const int64_t padding_idx = c.opt_int("pad_token_id").value_or(-1);
  g.fixed_positions = [rows, dim = s.hidden_size, padding_idx, dtype](Ops& op, Value* position_ids) {
    return sinusoidal_positions_t2t(op, op.Add(position_ids, 2.0), rows, dim, padding_idx, dtype);
  };
  s.names = {.norm = "layer_norm", .mlp = "", .input_layernorm = "self_attn_layer_norm",
             .post_attention_layernorm = "final_layer_norm"};
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype,
      {.num_attention_heads = "attention_heads", .num_key_value_heads = nullptr, .head_dim = nullptr});
  a.qkv_bias = a.o_bias = true;
  a.names.o_proj = "out_proj";
  s.mlp = {s.hidden_size, c.get_int("ffn_dim"), read_activation(c, "activation_function", "gelu"), true, dtype,
           /*gated=*/false, /*fused_gate_up=*/false, "fc1", "fc2"};
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
