// GPT-NeoX (transformers/models/gpt_neox/modeling_gpt_neox.py, GPTNeoXConfig): gpt_neox.embed_in,
// gpt_neox.layers.*, gpt_neox.final_layer_norm, embed_out; LayerNorm with bias; one
// attention.query_key_value projection laid out per head as [heads, 3, head_dim] (split in the
// graph) and attention.dense, with bias per attention_bias; use_parallel_residual (default true):
// h = x + attn(input_layernorm(x)) + mlp(post_attention_layernorm(x)); MLP dense_h_to_4h ->
// hidden_act -> dense_4h_to_h with bias; partial rotary (rotary_pct in older configs, 0.25 by
// default; rotary_emb_base the older rope_theta).
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_gpt_neox(const HfConfig& c, DataType dtype) {
  DecoderSpec s = layernorm_decoder_sizes(c, dtype);
  if (c.bool_or("use_parallel_residual", true)) s.topology = LayerTopology::parallel;
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  s.names = {.model = "gpt_neox", .embed_tokens = "embed_in", .norm = "final_layer_norm",
             .lm_head = "embed_out", .self_attn = "attention"};
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_key_value_heads = nullptr, .head_dim = nullptr});
  a.fused_qkv = FusedQKV{.name = "query_key_value", .groups = a.num_attention_heads};
  a.qkv_bias = a.o_bias = c.bool_or("attention_bias", true);
  a.names.o_proj = "dense";
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "gelu"),
           true, dtype, /*gated=*/false, /*fused_gate_up=*/false, "dense_h_to_4h", "dense_4h_to_h"};
  // GPTNeoXConfig.convert_rope_params_to_dict: the rope dict's values, else rotary_emb_base and
  // rotary_pct; a top-level rope_theta or partial_rotary_factor is not read
  s.rope = RopeConfig::from_params(c, RopeConfig::params(c), a.head_dim,
                                   {.rope_theta = c.float_or("rotary_emb_base", 10000.0),
                                    .partial_rotary_factor = c.float_or("rotary_pct", 0.25)});
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
