#include "blocks/audio_encoder.h"

#include "util/error.h"

namespace mobius {

namespace {
NormOptions layer_norm_options(const AudioEncoderOptions& o) {
  return {.dim = o.hidden_size, .eps = o.layer_norm_eps, .dtype = o.dtype, .kind = NormKind::LayerNorm};
}
}  // namespace

Wav2Vec2Attention::Wav2Vec2Attention(const AudioEncoderOptions& o) {
  MOBIUS_ASSERT(o.num_attention_heads > 0 && o.hidden_size % o.num_attention_heads == 0,
                "audio encoder: heads must divide hidden_size");
  AttentionOptions a;
  a.hidden_size = o.hidden_size;
  a.num_attention_heads = a.num_key_value_heads = o.num_attention_heads;
  a.head_dim = o.hidden_size / o.num_attention_heads;
  a.qkv_bias = a.o_bias = true;
  a.dtype = o.dtype;
  a.names.o_proj = "out_proj";
  attention = child<Attention>("", a);
}

Value* Wav2Vec2Attention::forward(Ops& op, Value* x, const AudioAttentionContext& ctx) const {
  return attention->forward(op, x, AttentionContext{.mask = ctx.mask}, nullptr, nullptr).hidden;
}

AudioEncoderLayer::AudioEncoderLayer(const AudioEncoderOptions& o, std::unique_ptr<AudioAttention> attn)
    : placement_(o.placement) {
  attention = adopt("attention", std::move(attn));
  layer_norm = child<LayerNorm>("layer_norm", layer_norm_options(o));
  feed_forward = child<MLP>("feed_forward", MLPOptions{.hidden_size = o.hidden_size,
                                                       .intermediate_size = o.intermediate_size,
                                                       .hidden_act = o.hidden_act,
                                                       .bias = true,
                                                       .dtype = o.dtype,
                                                       .gated = false,
                                                       .up_name = "intermediate_dense",
                                                       .down_name = "output_dense"});
  final_layer_norm = child<LayerNorm>("final_layer_norm", layer_norm_options(o));
}

Value* AudioEncoderLayer::forward(Ops& op, Value* x, const AudioAttentionContext& ctx) const {
  auto s = enter(op);
  const NormedResidual attn(placement_, layer_norm), ffn(placement_, final_layer_norm);
  Value* h = attn.output(op, x, attention->forward(op, attn.input(op, x), ctx));
  return ffn.output(op, h, feed_forward->forward(op, ffn.input(op, h)));
}

AudioTransformerEncoder::AudioTransformerEncoder(const AudioEncoderOptions& o,
                                                 std::unique_ptr<PositionConvEmbedding> pos,
                                                 const AudioAttentionFactory& attention)
    : o_(o) {
  pos_conv_embed = adopt("pos_conv_embed", std::move(pos));
  layer_norm = child<LayerNorm>("layer_norm", layer_norm_options(o));
  for (int64_t i = 0; i < o.num_hidden_layers; ++i)
    layers.push_back(child<AudioEncoderLayer>("layers." + std::to_string(i), o, attention(i)));
}

Value* AudioTransformerEncoder::forward(Ops& op, Value* h, Value* frames_valid) const {
  auto s = enter(op);
  AudioAttentionContext ctx;
  if (frames_valid) {
    h = op.Where(op.Unsqueeze(frames_valid, {-1}), h, 0.0);  // hidden_states[~mask] = 0
    ctx.mask = padding_mask(op, op.Cast(frames_valid, {.to = DataType::INT64}), o_.dtype);
  }
  h = op.Add(h, pos_conv_embed->forward(op, h));
  if (o_.placement == NormPlacement::post) h = layer_norm->forward(op, h);
  if (!layers.empty()) ctx.position_bias = layers.front()->attention->position_bias(op, h);
  for (const AudioEncoderLayer* layer : layers) h = layer->forward(op, h, ctx);
  if (o_.placement == NormPlacement::pre) h = layer_norm->forward(op, h);
  return h;
}

}  // namespace mobius
