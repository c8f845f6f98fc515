#include "blocks/conformer.h"

#include <cmath>
#include <limits>

#include "blocks/activation.h"
#include "util/error.h"

namespace mobius {

namespace {
NormOptions default_layer_norm(int64_t dim, DataType dtype) {  // nn.LayerNorm(dim): eps 1e-5
  return {.dim = dim, .eps = 1e-5f, .dtype = dtype, .kind = NormKind::LayerNorm};
}
}  // namespace

ConformerSelfAttention::ConformerSelfAttention(const ConformerOptions& o)
    : o_(o), heads_(o.encoder.num_attention_heads), head_dim_(o.encoder.hidden_size / o.encoder.num_attention_heads) {
  const int64_t h = o.encoder.hidden_size;
  const DataType t = o.encoder.dtype;
  linear_q = child<Linear>("linear_q", LinearOptions{h, h, true, t});
  linear_k = child<Linear>("linear_k", LinearOptions{h, h, true, t});
  linear_v = child<Linear>("linear_v", LinearOptions{h, h, true, t});
  linear_out = child<Linear>("linear_out", LinearOptions{h, h, true, t});
  if (o.positions == ConformerPositions::relative) {
    linear_pos = child<Linear>("linear_pos", LinearOptions{h, h, false, t});
    pos_bias_u = param("pos_bias_u", {heads_, head_dim_}, t);
    pos_bias_v = param("pos_bias_v", {heads_, head_dim_}, t);
  }
}

Value* ConformerSelfAttention::heads(Ops& op, Value* x) const {
  return op.Transpose(op.Reshape(x, {0, 0, heads_, head_dim_}), {.perm = {0, 2, 1, 3}});
}

Value* ConformerSelfAttention::forward(Ops& op, Value* x, Value* mask, const ConformerPositionInputs& pos) const {
  auto s = enter(op);
  Value* qk_in = x;
  if (o_.positions == ConformerPositions::rotary) {  // _apply_rotary_embedding: rotate-half per head
    Value* xh = op.Reshape(x, {0, 0, heads_, head_dim_});
    Value* first = op.Slice(xh, {0}, {head_dim_ / 2}, {3});
    Value* second = op.Slice(xh, {head_dim_ / 2}, {head_dim_}, {3});
    Value* rotated = op.Concat({op.Neg(second), first}, {.axis = 3});
    qk_in = op.Reshape(op.Add(op.Mul(xh, pos.cos), op.Mul(rotated, pos.sin)), {0, 0, -1});
  }
  Value* q = heads(op, linear_q->forward(op, qk_in));
  Value* k = heads(op, linear_k->forward(op, qk_in));
  Value* v = heads(op, linear_v->forward(op, x));
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
  if (o_.positions == ConformerPositions::relative) {  // _apply_relative_position_encoding
    GraphBuilder& b = op.builder();
    Value* p = op.Reshape(linear_pos->forward(op, pos.relative), {0, 0, heads_, head_dim_});
    p = op.Transpose(p, {.perm = {0, 2, 3, 1}});  // [1, heads, head_dim, 2 * frames - 1]
    Value* scores = op.MatMul(op.Add(q, op.Reshape(pos_bias_v->value(op), {1, heads_, 1, head_dim_})), p);
    // the shift: pad one zero column on the left, view [.., 2 * frames, frames], drop the first
    // row, view back [.., frames, 2 * frames - 1], keep the first `frames` columns
    Value* lead = op.Shape(scores, {.start = 0, .end = 3});  // [batch, heads, frames]
    Value* zeros = op.Expand(b.constant_float({0.0f}, {1, 1, 1, 1}, o_.encoder.dtype),
                             op.Concat({lead, b.ints({1})}, {.axis = 0}));
    Value* padded = op.Concat({zeros, scores}, {.axis = 3});
    Value* frames = op.Shape(scores, {.start = 2, .end = 3});
    Value* tall = op.Reshape(padded, op.Concat({op.Shape(scores, {.start = 0, .end = 2}), b.ints({-1}), frames},
                                               {.axis = 0}));
    tall = op.Slice(tall, {1}, {std::numeric_limits<int64_t>::max()}, {2});
    Value* rel = op.Slice(op.Reshape(tall, op.Shape(scores)), b.ints({0}), frames, b.ints({3}));
    Value* bias = op.Mul(rel, static_cast<double>(scale));
    mask = mask ? op.Add(bias, mask) : bias;
    q = op.Add(q, op.Reshape(pos_bias_u->value(op), {1, heads_, 1, head_dim_}));
  }
  AttentionOutputs a = op.Attention(q, k, v, mask, nullptr, nullptr, {.scale = scale});
  return linear_out->forward(op, op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1}));
}

ConformerConvModule::ConformerConvModule(const ConformerOptions& o) : o_(o) {
  const int64_t h = o.encoder.hidden_size;
  const DataType t = o.encoder.dtype;
  const int64_t k = o.conv_depthwise_kernel_size;
  layer_norm = child<LayerNorm>("layer_norm", default_layer_norm(h, t));
  pointwise_conv1 = child<Conv1d>("pointwise_conv1", Conv1dOptions{.in_channels = h, .out_channels = 2 * h,
                                                                   .kernel_size = 1, .bias = false, .dtype = t});
  depthwise_conv = child<Conv1d>("depthwise_conv", Conv1dOptions{.in_channels = h, .out_channels = h, .kernel_size = k,
                                                                 .padding = (k - 1) / 2, .groups = h, .bias = false,
                                                                 .dtype = t});
  bn_weight = param("batch_norm.weight", {h}, t);
  bn_bias = param("batch_norm.bias", {h}, t);
  bn_mean = param("batch_norm.running_mean", {h}, t);
  bn_var = param("batch_norm.running_var", {h}, t);
  pointwise_conv2 = child<Conv1d>("pointwise_conv2", Conv1dOptions{.in_channels = h, .out_channels = h,
                                                                   .kernel_size = 1, .bias = false, .dtype = t});
}

Value* ConformerConvModule::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  const int64_t h = o_.encoder.hidden_size;
  Value* y = pointwise_conv1->forward(op, op.Transpose(layer_norm->forward(op, x), {.perm = {0, 2, 1}}));
  y = op.Mul(op.Slice(y, {0}, {h}, {1}), op.Sigmoid(op.Slice(y, {h}, {2 * h}, {1})));  // GLU over the channels
  y = depthwise_conv->forward(op, y);
  auto channel = [&](const Parameter* p) { return op.Unsqueeze(p->value(op), {1}); };  // [hidden, 1]
  // BatchNorm1d (eval): (y - running_mean) / sqrt(running_var + eps) * weight + bias
  Value* invstd = op.Reciprocal(op.Sqrt(op.Add(channel(bn_var), 1e-5)));
  y = op.Add(op.Mul(op.Mul(op.Sub(y, channel(bn_mean)), invstd), channel(bn_weight)), channel(bn_bias));
  y = pointwise_conv2->forward(op, activation(op, o_.encoder.hidden_act, y));
  return op.Transpose(y, {.perm = {0, 2, 1}});
}

ConformerLayer::ConformerLayer(const ConformerOptions& o) {
  const AudioEncoderOptions& e = o.encoder;
  auto ffn = [&](const char* name) {
    return child<MLP>(name, MLPOptions{.hidden_size = e.hidden_size, .intermediate_size = e.intermediate_size,
                                       .hidden_act = e.hidden_act, .bias = true, .dtype = e.dtype, .gated = false,
                                       .up_name = "intermediate_dense", .down_name = "output_dense"});
  };
  ffn1_layer_norm = child<LayerNorm>("ffn1_layer_norm", default_layer_norm(e.hidden_size, e.dtype));
  ffn1 = ffn("ffn1");
  self_attn_layer_norm = child<LayerNorm>("self_attn_layer_norm", default_layer_norm(e.hidden_size, e.dtype));
  self_attn = child<ConformerSelfAttention>("self_attn", o);
  conv_module = child<ConformerConvModule>("conv_module", o);
  ffn2_layer_norm = child<LayerNorm>("ffn2_layer_norm", default_layer_norm(e.hidden_size, e.dtype));
  ffn2 = ffn("ffn2");
  final_layer_norm = child<LayerNorm>("final_layer_norm", default_layer_norm(e.hidden_size, e.dtype));
}

Value* ConformerLayer::forward(Ops& op, Value* x, Value* mask, const ConformerPositionInputs& pos) const {
  auto s = enter(op);
  Value* h = op.Add(op.Mul(ffn1->forward(op, ffn1_layer_norm->forward(op, x)), 0.5), x);
  h = op.Add(self_attn->forward(op, self_attn_layer_norm->forward(op, h), mask, pos), h);
  h = op.Add(h, conv_module->forward(op, h));
  h = op.Add(op.Mul(ffn2->forward(op, ffn2_layer_norm->forward(op, h)), 0.5), h);
  return final_layer_norm->forward(op, h);
}

ConformerEncoder::ConformerEncoder(const ConformerOptions& o) : o_(o) {
  MOBIUS_ASSERT(o.conv_depthwise_kernel_size % 2 == 1, "conformer: odd depthwise kernel");
  layer_norm = child<LayerNorm>("layer_norm", NormOptions{.dim = o.encoder.hidden_size, .eps = o.encoder.layer_norm_eps,
                                                          .dtype = o.encoder.dtype, .kind = NormKind::LayerNorm});
  for (int64_t i = 0; i < o.encoder.num_hidden_layers; ++i)
    layers.push_back(child<ConformerLayer>("layers." + std::to_string(i), o));
  if (o.positions == ConformerPositions::rotary)
    inv_freq = param("embed_positions.inv_freq", {o.encoder.hidden_size / o.encoder.num_attention_heads / 2},
                     o.encoder.dtype);
}

ConformerPositionInputs ConformerEncoder::positions(Ops& op, Value* h) const {
  auto s = op.builder().scope("embed_positions");
  GraphBuilder& b = op.builder();
  const DataType t = o_.encoder.dtype;
  ConformerPositionInputs out;
  Value* frames = op.Squeeze(op.Shape(h, {.start = 1, .end = 2}), {0});
  if (o_.positions == ConformerPositions::rotary) {  // Wav2Vec2ConformerRotaryPositionalEmbedding
    Value* time = op.Unsqueeze(op.Cast(op.Range(0, frames, 1), {.to = DataType::FLOAT}), {1});  // [frames, 1]
    Value* freqs = op.Mul(time, op.Cast(inv_freq->value(op), {.to = DataType::FLOAT}));
    Value* emb = op.Unsqueeze(op.Concat({freqs, freqs}, {.axis = 1}), {1});  // [frames, 1, head_dim]
    out.cos = op.Cast(op.Cos(emb), {.to = t});
    out.sin = op.Cast(op.Sin(emb), {.to = t});
  } else if (o_.positions == ConformerPositions::relative) {  // Wav2Vec2ConformerRelPositionalEmbedding
    const int64_t d = o_.encoder.hidden_size;
    std::vector<float> div;
    const float step = static_cast<float>(-(std::log(10000.0) / static_cast<double>(d)));
    for (int64_t i = 0; i < d; i += 2) div.push_back(std::exp(static_cast<float>(i) * step));
    // relative positions frames-1 .. -(frames-1)
    Value* p = op.Cast(op.Range(op.Sub(frames, 1), op.Neg(frames), -1), {.to = DataType::FLOAT});
    Value* angle = op.Mul(op.Unsqueeze(p, {1}), b.constant_f32(div, {static_cast<int64_t>(div.size())}));
    Value* pe = op.Concat({op.Unsqueeze(op.Sin(angle), {2}), op.Unsqueeze(op.Cos(angle), {2})}, {.axis = 2});
    out.relative = op.Cast(op.Reshape(pe, {1, -1, d}), {.to = t});  // even channels sin, odd cos
  }
  return out;
}

Value* ConformerEncoder::forward(Ops& op, Value* h, Value* frames_valid) const {
  auto s = enter(op);
  Value* mask = nullptr;
  if (frames_valid) {
    h = op.Where(op.Unsqueeze(frames_valid, {-1}), h, 0.0);  // hidden_states[~mask] = 0
    mask = padding_mask(op, op.Cast(frames_valid, {.to = DataType::INT64}), o_.encoder.dtype);
  }
  const ConformerPositionInputs pos = positions(op, h);
  for (const ConformerLayer* layer : layers) h = layer->forward(op, h, mask, pos);
  return layer_norm->forward(op, h);
}

}  // namespace mobius
