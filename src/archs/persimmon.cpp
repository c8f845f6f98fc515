// Persimmon (transformers/models/persimmon/modeling_persimmon.py, PersimmonConfig): the Llama
// layer with LayerNorm (with bias, layer_norm_eps); one self_attn.query_key_value projection laid
// out per head as [heads, 3, head_dim] (split in the graph) and self_attn.dense, both with bias;
// qk_layernorm (default true): LayerNorm over head_dim with bias, shared by the heads; partial
// rotary (0.5 when config.json has none); MLP dense_h_to_4h -> hidden_act (relu2) ->
// dense_4h_to_h with bias; model.final_layernorm.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_persimmon(const HfConfig& c, DataType dtype) {
  DecoderSpec s = layernorm_decoder_sizes(c, dtype);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
  s.names.norm = "final_layernorm";
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_key_value_heads = nullptr, .head_dim = nullptr});
  a.fused_qkv = FusedQKV{.name = "query_key_value", .groups = a.num_attention_heads};
  a.qkv_bias = a.o_bias = true;
  a.names.o_proj = "dense";
  a.norm_eps = s.norm_eps;
  if (c.bool_or("qk_layernorm", true))
    a.qk_norm = QKNorm{.kind = NormKind::LayerNorm, .bias = true, .q_name = "q_layernorm",
                       .k_name = "k_layernorm"};
  s.mlp = {s.hidden_size, c.get_int("intermediate_size"), read_activation(c, "hidden_act", "relu2"),
           true, dtype, /*gated=*/false, /*fused_gate_up=*/false, "dense_h_to_4h", "dense_4h_to_h"};
  s.rope = RopeConfig::from_hf(c, a.head_dim, {.partial_rotary_factor = 0.5});
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
