// Persimmon (transformers/models/persimmon/modeling_persimmon.py, PersimmonConfig): the Llama
// layer with LayerNorm (with bias, layer_norm_eps); one self_attn.query_key_value projection laid
// out per head as [heads, 3, head_dim] (split in the graph) and self_attn.dense, both with bias;
// qk_layernorm (default true): LayerNorm over head_dim with bias, shared by the heads; partial
// rotary (0.5 when config.json has none); MLP dense_h_to_4h -> hidden_act (relu2) ->
// dense_4h_to_h with bias; model.final_layernorm.
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "blocks/decoder.h"

namespace mobius {

std::unique_ptr<Architecture> create_persimmon(const HfConfig& c, DataType dtype) {
  DecoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.num_hidden_layers = c.get_int("num_hidden_layers");
  s.norm_kind = NormKind::LayerNorm;
  s.norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-5));
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
  s.layer_types.assign(static_cast<size_t>(s.num_hidden_layers), "full_attention");
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
