#include "blocks/seq2seq_layer.h"

#include <utility>

namespace mobius {

namespace {

AttentionOptions attention_options(const Seq2SeqLayerOptions& o, AttentionNames names = {"q_proj", "k_proj", "v_proj",
                                                                                          "out_proj"}) {
  AttentionOptions a;
  a.hidden_size = o.d_model;
  a.num_attention_heads = a.num_key_value_heads = o.num_heads;
  a.head_dim = o.d_model / o.num_heads;
  a.qkv_bias = a.o_bias = o.attention_bias;
  a.k_bias = o.k_bias;
  a.dtype = o.dtype;
  a.names = std::move(names);
  return a;
}

NormOptions norm_options(const Seq2SeqLayerOptions& o) {
  return {.dim = o.d_model, .eps = o.layer_norm_eps, .dtype = o.dtype, .kind = NormKind::LayerNorm};
}

MLPOptions mlp_options(const Seq2SeqLayerOptions& o) {
  return {.hidden_size = o.d_model, .intermediate_size = o.ffn_dim, .hidden_act = o.activation_function,
          .bias = true, .dtype = o.dtype, .gated = false};
}

}  // namespace

Seq2SeqEncoderLayer::Seq2SeqEncoderLayer(const Seq2SeqLayerOptions& o) : placement_(o.placement) {
  self_attn = child<Attention>("self_attn", attention_options(o, o.encoder_self_attn_names));
  self_attn_layer_norm = adopt("self_attn_layer_norm", make_norm(norm_options(o)));
  ffn = adopt("", make_mlp(mlp_options(o)));
  final_layer_norm = adopt("final_layer_norm", make_norm(norm_options(o)));
}

Value* Seq2SeqEncoderLayer::forward(Ops& op, Value* x, Value* mask) const {
  auto s = enter(op);
  const NormedResidual attn(placement_, self_attn_layer_norm), ff(placement_, final_layer_norm);
  x = attn.output(op, x, self_attn->forward(op, attn.input(op, x), {.mask = mask}, nullptr, nullptr).hidden);
  return ff.output(op, x, ffn->forward(op, ff.input(op, x)));
}

Seq2SeqDecoderLayer::Seq2SeqDecoderLayer(const Seq2SeqLayerOptions& o) : placement_(o.placement) {
  self_attn = child<Attention>("self_attn", attention_options(o));
  self_attn_layer_norm = adopt("self_attn_layer_norm", make_norm(norm_options(o)));
  encoder_attn = child<CrossAttention>("encoder_attn", attention_options(o));
  encoder_attn_layer_norm = adopt("encoder_attn_layer_norm", make_norm(norm_options(o)));
  ffn = adopt("", make_mlp(mlp_options(o)));
  final_layer_norm = adopt("final_layer_norm", make_norm(norm_options(o)));
}

std::pair<Value*, std::vector<KVPair>> Seq2SeqDecoderLayer::forward(Ops& op, Value* x, Value* self_mask,
                                                                    Value* encoder_hidden_states, Value* cross_mask,
                                                                    const std::vector<KVPair>& past) const {
  auto s = enter(op);
  const NormedResidual attn(placement_, self_attn_layer_norm), cross(placement_, encoder_attn_layer_norm),
      ff(placement_, final_layer_norm);
  AttentionResult a = self_attn->forward(op, attn.input(op, x), {.mask = self_mask}, past[0].key, past[0].value);
  x = attn.output(op, x, a.hidden);
  AttentionResult c =
      encoder_attn->forward(op, cross.input(op, x), encoder_hidden_states, cross_mask, past[1].key, past[1].value);
  x = cross.output(op, x, c.hidden);
  x = ff.output(op, x, ffn->forward(op, ff.input(op, x)));
  return {x, {{a.present_key, a.present_value}, {c.present_key, c.present_value}}};
}

}  // namespace mobius
