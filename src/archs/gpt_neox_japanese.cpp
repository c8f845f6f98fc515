// GPT-NeoX-Japanese (transformers/models/gpt_neox_japanese/modeling_gpt_neox_japanese.py,
// configuration_gpt_neox_japanese.py): gpt_neox_japanese.embed_in -> gpt_neox_japanese.layers.*,
// sequential pre-norm layers: h = x + attn(input_layernorm(x)); out = h +
// mlp(post_attention_layernorm(h)) -> gpt_neox_japanese.final_layer_norm -> embed_out (tied to
// embed_in by default). LayerNorm with bias, eps layer_norm_eps. Attention: query_key_value
// without bias, laid out per head as [heads, 3, head_dim] (as GPT-NeoX's), dense without bias;
// the last layer's attention adds its own attention.dense_bias [hidden_size] to the output before
// the residual (bias_dropout_add, use_bias = layer_number == num_hidden_layers - 1). Scale
// 1/sqrt(head_dim). Partial RoPE: rope_parameters, else rotary_emb_base and rotary_pct (default
// 1.0: every channel). MLP dense_h_to_4h -> hidden_act -> dense_4h_to_h without bias,
// int(hidden_size * intermediate_multiple_size) wide.
#include <memory>

#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/llama.h"
#include "blocks/decoder.h"
#include "blocks/spec_check.h"

namespace mobius {
namespace {

// The last layer's GPTNeoXJapaneseAttention: the attention output + dense_bias.
class DenseBiasAttention : public Attention {
 public:
  explicit DenseBiasAttention(const AttentionOptions& o)
      : Attention(o), dense_bias_(param("dense_bias", {o.hidden_size}, o.dtype)) {}

  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                          Value* past_value) const override {
    AttentionResult r = Attention::forward(op, x, ctx, past_key, past_value);
    r.hidden = op.Add(r.hidden, dense_bias_->value(op));
    return r;
  }

 private:
  Parameter* dense_bias_;
};

}  // namespace

std::unique_ptr<Architecture> create_gpt_neox_japanese(const HfConfig& c, DataType dtype) {
  DecoderSpec s = layernorm_decoder_sizes(c, dtype);
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.names = {.model = "gpt_neox_japanese", .embed_tokens = "embed_in", .norm = "final_layer_norm",
             .lm_head = "embed_out", .self_attn = "attention"};
  AttentionOptions& a = s.attention = read_attention(
      c, s.hidden_size, dtype, {.num_key_value_heads = nullptr, .head_dim = nullptr});
  a.fused_qkv = FusedQKV{.name = "query_key_value", .groups = a.num_attention_heads};
  a.qkv_bias = a.o_bias = false;
  a.names.o_proj = "dense";
  const int64_t multiple = c.int_or("intermediate_multiple_size", 4);
  if (multiple <= 0) c.fail("intermediate_multiple_size", "must be positive");
  s.mlp = {s.hidden_size, s.hidden_size * multiple, read_activation(c, "hidden_act", "gelu"), false, dtype,
           /*gated=*/false, /*fused_gate_up=*/false, "dense_h_to_4h", "dense_4h_to_h"};
  // GPTNeoXJapaneseConfig.convert_rope_params_to_dict: the rope dict's values, else
  // rotary_emb_base and rotary_pct
  s.rope = RopeConfig::from_params(c, RopeConfig::params(c), a.head_dim,
                                   {.rope_theta = c.float_or("rotary_emb_base", 10000.0),
                                    .partial_rotary_factor = c.float_or("rotary_pct", 1.0)});
  check_attention(a);
  s.make_attention = [a, last = s.num_hidden_layers - 1](int64_t layer) -> std::unique_ptr<SelfAttention> {
    if (layer == last) return std::make_unique<DenseBiasAttention>(a);
    return std::make_unique<Attention>(a);
  };
  return std::make_unique<DecoderCausalLM>(s);
}

}  // namespace mobius
