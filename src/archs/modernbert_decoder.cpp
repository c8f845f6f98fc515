// ModernBERT decoder (transformers/models/modernbert_decoder/{modeling,configuration}_modernbert_decoder.py,
// 5.23; ModernBertDecoderForCausalLM):
//   embeddings : model.embeddings.norm(model.embeddings.tok_embeddings(ids))  (no positions)
//   each layer : h = x + attn(attn_norm(x))        (attn_norm: none in layer 0, nn.Identity)
//                out = h + mlp(mlp_norm(h))
//     attn: q_proj / k_proj / v_proj, RoPE (rotate_half) of the layer type's theta, causal, on a
//       "sliding_attention" layer within the last sliding_window keys, Wo; multi-head of
//       hidden_size / num_attention_heads, bias per attention_bias
//     mlp: Wo(act(input) * gate), input | gate the halves of Wi (bias per mlp_bias)
//   model.final_norm -> lm_head (ModernBertDecoderPredictionHead: norm(act(dense(x))), dense bias
//   classifier_bias, act classifier_activation) -> decoder (tied to tok_embeddings by default, bias
//   decoder_bias). Every LayerNorm: eps norm_eps, a bias only with norm_bias.
// The layer types, the window (local_attention // 2 unless config.json sets sliding_window) and the
// two RoPE thetas as the encoder's (archs/modernbert.h).
#include "archs/archs.h"
#include "archs/attention_config.h"
#include "archs/modernbert.h"
#include "blocks/activation.h"
#include "blocks/decoder.h"
#include "blocks/linear.h"

namespace mobius {
namespace {

class ModernBertDecoderCausalLM : public DecoderCausalLM {
 public:
  ModernBertDecoderCausalLM(const DecoderSpec& s, bool dense_bias, std::string act)
      : DecoderCausalLM(s), act_(std::move(act)) {
    embeddings_norm = adopt("model.embeddings.norm", make_norm(s.norm()));
    dense = child<Linear>("lm_head.dense", LinearOptions{s.hidden_size, s.hidden_size, dense_bias, s.dtype});
    head_norm = adopt("lm_head.norm", make_norm(s.norm()));
  }

  Norm* embeddings_norm;
  Linear* dense;
  Norm* head_norm;

 protected:
  Value* stem(Ops& op, Value* h, const CausalLMInputs&) const override { return embeddings_norm->forward(op, h); }
  Value* head_input(Ops& op, Value* h) const override {
    h = DecoderCausalLM::head_input(op, h);  // model.final_norm
    return head_norm->forward(op, activation(op, act_, dense->forward(op, h)));
  }

 private:
  std::string act_;
};

}  // namespace

std::unique_ptr<Architecture> create_modernbert_decoder(const HfConfig& c, DataType dtype) {
  DecoderSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");
  s.num_hidden_layers = c.get_int("num_hidden_layers");
  s.norm_kind = NormKind::LayerNorm;
  s.norm_eps = static_cast<float>(c.float_or("norm_eps", 1e-5));
  s.norm_bias = c.bool_or("norm_bias", false);
  s.names = {.embed_tokens = "embeddings.tok_embeddings", .norm = "final_norm", .lm_head = "decoder",
             .self_attn = "attn", .input_layernorm = "attn_norm", .post_attention_layernorm = "mlp_norm"};
  s.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
  s.lm_head_bias = c.bool_or("decoder_bias", true);
  s.attention = read_attention(c, s.hidden_size, dtype, {.num_key_value_heads = nullptr, .head_dim = nullptr});
  s.attention.qkv_bias = s.attention.o_bias = c.bool_or("attention_bias", false);
  s.attention.names.o_proj = "Wo";
  s.mlp = MLPOptions{.hidden_size = s.hidden_size, .intermediate_size = c.get_int("intermediate_size"),
                     .hidden_act = read_activation(c, "hidden_activation", "gelu"),
                     .bias = c.bool_or("mlp_bias", false), .dtype = dtype, .fused_gate_up = true,
                     .gated_down_name = "Wo", .gate_up_name = "Wi"};
  ModernBertLayers layers = read_modernbert_layers(c, s.num_hidden_layers, s.attention.head_dim);
  s.layer_types = std::move(layers.layer_types);
  s.sliding_window = layers.sliding_window;
  for (const auto& t : s.layer_types)
    if (t == "sliding_attention" && s.sliding_window < 1)
      c.fail(c.has("sliding_window") ? "sliding_window" : "local_attention",
             "a sliding layer needs a window of at least 1 key (local_attention >= 2)");
  s.layer_type_rope = {{"full_attention", layers.full_rope}, {"sliding_attention", layers.sliding_rope}};
  s.layer_input_norm.assign(static_cast<size_t>(s.num_hidden_layers), true);
  if (!s.layer_input_norm.empty()) s.layer_input_norm[0] = false;
  return std::make_unique<ModernBertDecoderCausalLM>(s, c.bool_or("classifier_bias", false),
                                                     read_activation(c, "classifier_activation", "gelu"));
}

}  // namespace mobius
