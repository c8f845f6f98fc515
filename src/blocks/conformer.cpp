#include "blocks/conformer.h"

#include <cmath>
#include <limits>

#include "blocks/activation.h"
#include "util/error.h"

namespace mobius {

namespace {
// The LayerNorms inside a layer: nn.LayerNorm(dim) (eps 1e-5) in wav2vec2-conformer, eps
// layer_norm_eps in wav2vec2-bert.
NormOptions inner_layer_norm(const ConformerOptions& o) {
  const float eps = o.layout == ConformerLayout::bert ? o.encoder.layer_norm_eps : 1e-5f;
  return {.dim = o.encoder.hidden_size, .eps = eps, .dtype = o.encoder.dtype, .kind = NormKind::LayerNorm};
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
  if (o.positions == ConformerPositions::relative_key)
    distance_embedding = child<Embedding>(
        "distance_embedding", o.left_max_position_embeddings + o.right_max_position_embeddings + 1, head_dim_, t);
}

Value* ConformerSelfAttention::relative_key_bias(Ops& op, Value* q) const {
  // _apply_relative_key_position_encoding: einsum("bhld,lrd->bhlr", q, E[clamp(r - l) + left])
  Value* frames = op.Squeeze(op.Shape(q, {.start = 2, .end = 3}), {0});
  Value* pos = op.Range(0, frames, 1);
  Value* distance = op.Sub(op.Unsqueeze(pos, {0}), op.Unsqueeze(pos, {1}));  // [l, r]: r - l
  const double left = static_cast<double>(o_.left_max_position_embeddings);
  distance = op.Min(op.Max(distance, -left), static_cast<double>(o_.right_max_position_embeddings));
  Value* e = distance_embedding->forward(op, op.Add(distance, left));  // [l, r, head_dim]
  Value* ql = op.Reshape(op.Transpose(q, {.perm = {2, 0, 1, 3}}), {0, -1, head_dim_});  // [l, batch * heads, d]
  Value* scores = op.MatMul(ql, op.Transpose(e, {.perm = {0, 2, 1}}));             // [l, batch * heads, r]
  Value* bhl = op.Concat({op.Shape(q, {.start = 2, .end = 3}), op.Shape(q, {.start = 0, .end = 2}), op.builder().ints({-1})},
                         {.axis = 0});
  return op.Transpose(op.Reshape(scores, bhl), {.perm = {1, 2, 0, 3}});  // [batch, heads, l, r]
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
  } else if (o_.positions == ConformerPositions::relative_key) {
    Value* bias = op.Mul(relative_key_bias(op, q), static_cast<double>(scale));
    mask = mask ? op.Add(bias, mask) : bias;
  }
  AttentionOutputs a = op.Attention(q, k, v, mask, nullptr, nullptr, {.scale = scale});
  op.builder().producer(a.y).tags = {.num_heads = heads_, .kv_num_heads = heads_, .head_size = head_dim_};
  return linear_out->forward(op, op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1}));
}

ConformerConvModule::ConformerConvModule(const ConformerOptions& o) : o_(o) {
  const int64_t h = o.encoder.hidden_size;
  const DataType t = o.encoder.dtype;
  const int64_t k = o.conv_depthwise_kernel_size;
  const bool bert = o.layout == ConformerLayout::bert;
  layer_norm = child<LayerNorm>("layer_norm", inner_layer_norm(o));
  pointwise_conv1 = child<Conv1d>("pointwise_conv1", Conv1dOptions{.in_channels = h, .out_channels = 2 * h,
                                                                   .kernel_size = 1, .bias = false, .dtype = t});
  depthwise_conv = child<Conv1d>("depthwise_conv", Conv1dOptions{.in_channels = h, .out_channels = h, .kernel_size = k,
                                                                 .padding = bert ? 0 : (k - 1) / 2, .groups = h,
                                                                 .bias = false, .dtype = t});
  if (bert) {
    depthwise_layer_norm = child<LayerNorm>("depthwise_layer_norm", inner_layer_norm(o));
  } else {
    bn_weight = param("batch_norm.weight", {h}, t);
    bn_bias = param("batch_norm.bias", {h}, t);
    bn_mean = param("batch_norm.running_mean", {h}, t);
    bn_var = param("batch_norm.running_var", {h}, t);
  }
  pointwise_conv2 = child<Conv1d>("pointwise_conv2", Conv1dOptions{.in_channels = h, .out_channels = h,
                                                                   .kernel_size = 1, .bias = false, .dtype = t});
}

Value* ConformerConvModule::forward(Ops& op, Value* x, Value* frames_valid) const {
  auto s = enter(op);
  const int64_t h = o_.encoder.hidden_size;
  const bool bert = o_.layout == ConformerLayout::bert;
  Value* y = layer_norm->forward(op, x);
  if (bert && frames_valid) y = op.Where(op.Unsqueeze(frames_valid, {-1}), y, 0.0);
  y = pointwise_conv1->forward(op, op.Transpose(y, {.perm = {0, 2, 1}}));
  y = op.Mul(op.Slice(y, {0}, {h}, {1}), op.Sigmoid(op.Slice(y, {h}, {2 * h}, {1})));  // GLU over the channels
  if (bert) {  // causal: kernel - 1 zero frames on the left
    Value* shape = op.Concat({op.Shape(y, {.start = 0, .end = 2}), op.builder().ints({o_.conv_depthwise_kernel_size - 1})},
                             {.axis = 0});
    y = op.Concat({op.Expand(op.builder().constant_float({0.0f}, {1, 1, 1}, o_.encoder.dtype), shape), y}, {.axis = 2});
  }
  y = depthwise_conv->forward(op, y);
  if (bert) {
    y = op.Transpose(depthwise_layer_norm->forward(op, op.Transpose(y, {.perm = {0, 2, 1}})), {.perm = {0, 2, 1}});
  } else {  // BatchNorm1d (eval): (y - running_mean) / sqrt(running_var + eps) * weight + bias
    auto channel = [&](const Parameter* p) { return op.Unsqueeze(p->value(op), {1}); };  // [hidden, 1]
    Value* invstd = op.Reciprocal(op.Sqrt(op.Add(channel(bn_var), 1e-5)));
    y = op.Add(op.Mul(op.Mul(op.Sub(y, channel(bn_mean)), invstd), channel(bn_weight)), channel(bn_bias));
  }
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
  ffn1_layer_norm = child<LayerNorm>("ffn1_layer_norm", inner_layer_norm(o));
  ffn1 = ffn("ffn1");
  self_attn_layer_norm = child<LayerNorm>("self_attn_layer_norm", inner_layer_norm(o));
  self_attn = child<ConformerSelfAttention>("self_attn", o);
  conv_module = child<ConformerConvModule>("conv_module", o);
  ffn2_layer_norm = child<LayerNorm>("ffn2_layer_norm", inner_layer_norm(o));
  ffn2 = ffn("ffn2");
  final_layer_norm = child<LayerNorm>("final_layer_norm", inner_layer_norm(o));
}

Value* ConformerLayer::forward(Ops& op, Value* x, Value* mask, const ConformerPositionInputs& pos,
                               Value* frames_valid) const {
  auto s = enter(op);
  Value* h = op.Add(op.Mul(ffn1->forward(op, ffn1_layer_norm->forward(op, x)), 0.5), x);
  h = op.Add(self_attn->forward(op, self_attn_layer_norm->forward(op, h), mask, pos), h);
  h = op.Add(h, conv_module->forward(op, h, frames_valid));
  h = op.Add(op.Mul(ffn2->forward(op, ffn2_layer_norm->forward(op, h)), 0.5), h);
  return final_layer_norm->forward(op, h);
}

ConformerEncoder::ConformerEncoder(const ConformerOptions& o) : o_(o) {
  MOBIUS_ASSERT(o.conv_depthwise_kernel_size % 2 == 1, "conformer: odd depthwise kernel");
  if (o.layout == ConformerLayout::wav2vec2_conformer)
    layer_norm = child<LayerNorm>("layer_norm", NormOptions{.dim = o.encoder.hidden_size, .eps = o.encoder.layer_norm_eps,
                                                            .dtype = o.encoder.dtype, .kind = NormKind::LayerNorm});
  for (int64_t i = 0; i < o.encoder.num_hidden_layers; ++i)
    layers.push_back(child<ConformerLayer>("layers." + std::to_string(i), o));
  if (o.positions == ConformerPositions::rotary && o.layout == ConformerLayout::wav2vec2_conformer)
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
    Value* freqs;
    if (inv_freq) {
      freqs = op.Mul(time, op.Cast(inv_freq->value(op), {.to = DataType::FLOAT}));
    } else {  // 1 / base^(2i / head_dim), in float32 as torch computes it
      const int64_t dim = o_.encoder.hidden_size / o_.encoder.num_attention_heads;
      std::vector<float> f;
      for (int64_t i = 0; i < dim; i += 2)
        f.push_back(1.0f / std::pow(static_cast<float>(o_.rotary_embedding_base),
                                    static_cast<float>(i) / static_cast<float>(dim)));
      freqs = op.Mul(time, b.constant_f32(f, {static_cast<int64_t>(f.size())}));
    }
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
  for (const ConformerLayer* layer : layers) h = layer->forward(op, h, mask, pos, frames_valid);
  return layer_norm ? layer_norm->forward(op, h) : h;
}

}  // namespace mobius
