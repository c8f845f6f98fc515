// OPT (transformers/models/opt/modeling_opt.py): model.decoder.embed_tokens
// (word_embed_proj_dim wide, project_in / project_out to hidden_size when different) +
// embed_positions(position_ids + 2) -> layers: self_attn_layer_norm, self_attn ({q,k,v,out}_proj),
// final_layer_norm, fc1 -> activation_function -> fc2 directly in the layer; pre-norm when
// do_layer_norm_before, else each norm after its residual add (then no final norm, as also with
// _remove_final_layer_norm) -> lm_head tied to embed_tokens by default. LayerNorm eps 1e-5 (the
// torch default); enable_bias on every projection.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/gpt2.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_opt(const HfConfig& c, DataType dtype) {
  GptSpec g{.decoder = gpt_decoder_sizes(c, dtype, "hidden_size", "num_hidden_layers"),
            .positions = PositionEmbeddingSpec{"embed_positions", c.get_int("max_position_embeddings") + 2, 2}};
  DecoderSpec& s = g.decoder;
  if (!c.bool_or("layer_norm_elementwise_affine", true))
    c.fail("layer_norm_elementwise_affine", "LayerNorm without weight and bias is not supported");
  s.norm_eps = 1e-5f;  // OPTConfig has no epsilon field
  s.embedding_dim = c.int_or("word_embed_proj_dim", s.hidden_size);
  const bool pre_norm = c.bool_or("do_layer_norm_before", true);
  if (!pre_norm) s.topology = LayerTopology::norm_after_residual;
  const bool final_norm = pre_norm && !c.bool_or("_remove_final_layer_norm", false);
  s.names = {.model = "model.decoder", .norm = final_norm ? "final_layer_norm" : "", .mlp = "",
             .input_layernorm = "self_attn_layer_norm", .post_attention_layernorm = "final_layer_norm"};
  s.layer_uses_rope.assign(static_cast<size_t>(s.num_hidden_layers), false);
  const bool bias = c.bool_or("enable_bias", true);
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_key_value_heads = nullptr, .head_dim = nullptr});
  a.qkv_bias = a.o_bias = bias;
  a.names.o_proj = "out_proj";
  s.mlp = {s.hidden_size, c.get_int("ffn_dim"), read_activation(c, "activation_function", "relu"),
           bias, dtype, /*gated=*/false, /*fused_gate_up=*/false, "fc1", "fc2"};
  return std::make_unique<GptCausalLM>(g);
}

}  // namespace mobius
