// Phi-4-multimodal's audio encoder and projection (archs/phi4_multimodal_audio.h), as
// transformers/models/phi4_multimodal/modeling_phi4_multimodal.py computes them:
//   Phi4MultimodalAudioMeanVarianceNormLayer: (x - global_mean) * global_invstd
//   Phi4MultimodalAudioNemoConvSubsampling: Conv2d(1, C, 3, stride 2, pad 1), act, then
//     log2(time_reduction) - 1 times [depth-wise Conv2d(C, C, 3, 2, 1), point-wise Conv2d(C, C, 1),
//     act]; the channels and the remaining feature bins flattened, `out` Linear; the padding mask
//     t < ceil(real frames / time_reduction)
//   Phi4MultimodalAudioModel.forward: sequences longer than 500 steps cut into chunks of 500
//     (zero-padded, unfold_tensor), each chunk's mask its padding mask AND the streaming mask
//     (adaptive_enc_mask: chunk_size, left_chunk; none when chunk_size <= 0); the attention mask is
//     that bool mask ADDED to the relative attention bias (1 where allowed, 0 elsewhere: transformers
//     adds it, it does not mask), bias_values[clamp(j - i, -max_distance, max_distance - 1) +
//     num_buckets / 2] (|j - i| when bias_symmetric)
//   Phi4MultimodalAudioConformerEncoderLayer: x + 0.5 ff_in(x); + self_attn(layer_norm_att(.));
//     + conv(.); + 0.5 ff_out(.); layer_norm. ff: LayerNorm, gate_up_proj (up | gate halves),
//     up * act(gate), down_proj. conv: LayerNorm, GLU point-wise Conv1d (out[:ext] + b1) *
//     glu_act(out[ext:] + b2), depth-wise Conv1d (kernel k, padding k - 1) and point-wise Conv1d,
//     the last k - 1 steps cut, act, ext_pw_conv_1d. Attention: q/k/v/o with biases, scale
//     head_dim^-0.5, softmax over the keys.
//   Phi4MultimodalAudioEmbedding: up_proj, GELU (erf), down_proj (*_for_speech, or
//     *_for_vision_speech with images), audio b's first audio_embed_sizes[b] rows.
#include "archs/phi4_multimodal_audio.h"

#include <cmath>

#include "blocks/activation.h"
#include "blocks/conv.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "util/error.h"

namespace mobius {

namespace phi4_audio {

constexpr int64_t kMaxChunk = 500;  // Phi4MultimodalAudioModel.forward's max_seq_len

struct AudioSizes {
  int64_t hidden, intermediate, num_layers, heads, kernel, multiplier, channels, final_size, input_size, time_reduction;
  int64_t chunk_size, left_chunk, max_distance;
  bool symmetric;
  std::string act, conv_act, glu_act, nemo_act;
  DataType dtype;
};

// Phi4MultimodalAudioMLP: layer_norm, gate_up_proj -> (up | gate), up * act(gate), down_proj.
class AudioFeedForward : public Module {
 public:
  explicit AudioFeedForward(const AudioSizes& s) : s_(s) {
    norm = child<LayerNorm>("layer_norm", NormOptions{.dim = s.hidden, .eps = 1e-5f, .dtype = s.dtype});
    gate_up = child<Linear>("gate_up_proj", LinearOptions{s.hidden, 2 * s.intermediate, true, s.dtype});
    down = child<Linear>("down_proj", LinearOptions{s.intermediate, s.hidden, true, s.dtype});
  }
  Value* forward(Ops& op, Value* x) const {
    auto scope = enter(op);
    Value* h = gate_up->forward(op, norm->forward(op, x));
    Value* up = op.Slice(h, {0}, {s_.intermediate}, {-1});
    Value* gate = op.Slice(h, {s_.intermediate}, {2 * s_.intermediate}, {-1});
    return down->forward(op, op.Mul(up, activation(op, s_.act, gate)));
  }
  LayerNorm* norm;
  Linear *gate_up, *down;

 private:
  AudioSizes s_;
};

// Phi4MultimodalAudioConvModule over x [B, L, hidden] -> [B, L, hidden].
class AudioConvModule : public Module {
 public:
  explicit AudioConvModule(const AudioSizes& s) : s_(s) {
    const int64_t h = s.hidden;
    norm = child<LayerNorm>("layer_norm", NormOptions{.dim = h, .eps = 1e-5f, .dtype = s.dtype});
    glu = child<Conv1d>("glu.ext_pw_conv_1d", Conv1dOptions{.in_channels = h, .out_channels = 2 * h, .kernel_size = 1,
                                                            .dtype = s.dtype});
    b1 = param("glu.b1", {1, h, 1}, s.dtype);
    b2 = param("glu.b2", {1, h, 1}, s.dtype);
    dw = child<Conv1d>("dw_sep_conv_1d.dw_conv",
                       Conv1dOptions{.in_channels = h, .out_channels = h * s.multiplier, .kernel_size = s.kernel,
                                     .padding = s.kernel - 1, .groups = h, .dtype = s.dtype});
    pw = child<Conv1d>("dw_sep_conv_1d.pw_conv",
                       Conv1dOptions{.in_channels = h * s.multiplier, .out_channels = h, .kernel_size = 1,
                                     .dtype = s.dtype});
    ext = child<Conv1d>("ext_pw_conv_1d", Conv1dOptions{.in_channels = h, .out_channels = h, .kernel_size = 1,
                                                        .dtype = s.dtype});
  }
  Value* forward(Ops& op, Value* x, Value* length) const {
    auto scope = enter(op);
    const int64_t h = s_.hidden;
    Value* y = glu->forward(op, op.Transpose(norm->forward(op, x), {.perm = {0, 2, 1}}));  // [B, 2h, L]
    Value* a = op.Add(op.Slice(y, {0}, {h}, {1}), b1->value(op));
    Value* g = op.Add(op.Slice(y, {h}, {2 * h}, {1}), b2->value(op));
    y = pw->forward(op, dw->forward(op, op.Mul(a, activation(op, s_.glu_act, g))));  // [B, h, L + k - 1]
    y = op.Slice(y, op.builder().ints({0}), length, op.builder().ints({2}));  // the last k - 1 steps cut
    y = ext->forward(op, activation(op, s_.conv_act, y));
    return op.Transpose(y, {.perm = {0, 2, 1}});
  }
  LayerNorm* norm;
  Conv1d *glu, *dw, *pw, *ext;
  Parameter *b1, *b2;

 private:
  AudioSizes s_;
};

// Phi4MultimodalAudioAttention: x [B, L, hidden], mask [B, heads, L, L] additive -> [B, L, hidden].
class AudioAttention : public Module {
 public:
  explicit AudioAttention(const AudioSizes& s) : s_(s) {
    for (const char* n : {"q_proj", "k_proj", "v_proj", "o_proj"})
      proj.push_back(child<Linear>(n, LinearOptions{s.hidden, s.hidden, true, s.dtype}));
  }
  Value* forward(Ops& op, Value* x, Value* mask) const {
    auto scope = enter(op);
    const int64_t hd = s_.hidden / s_.heads;
    auto heads = [&](Value* v) {  // [B, L, hidden] -> [B, heads, L, hd]
      return op.Transpose(op.Reshape(v, std::vector<int64_t>{0, 0, s_.heads, hd}), {.perm = {0, 2, 1, 3}});
    };
    Value* q = heads(proj[0]->forward(op, x));
    Value* k = heads(proj[1]->forward(op, x));
    Value* v = heads(proj[2]->forward(op, x));
    Value* scores = op.Add(op.Mul(op.MatMul(q, op.Transpose(k, {.perm = {0, 1, 3, 2}})),
                                  1.0 / std::sqrt(static_cast<double>(hd))),
                           mask);
    Value* out = op.MatMul(op.Softmax(scores, {.axis = -1}), v);
    out = op.Reshape(op.Transpose(out, {.perm = {0, 2, 1, 3}}), std::vector<int64_t>{0, 0, s_.hidden});
    return proj[3]->forward(op, out);
  }
  std::vector<Linear*> proj;

 private:
  AudioSizes s_;
};

class AudioConformerLayer : public Module {
 public:
  explicit AudioConformerLayer(const AudioSizes& s) {
    ff_in = child<AudioFeedForward>("feed_forward_in", s);
    attn = child<AudioAttention>("self_attn", s);
    conv = child<AudioConvModule>("conv", s);
    ff_out = child<AudioFeedForward>("feed_forward_out", s);
    norm_att = child<LayerNorm>("layer_norm_att", NormOptions{.dim = s.hidden, .eps = 1e-5f, .dtype = s.dtype});
    norm = child<LayerNorm>("layer_norm", NormOptions{.dim = s.hidden, .eps = 1e-5f, .dtype = s.dtype});
  }
  Value* forward(Ops& op, Value* x, Value* mask, Value* length) const {
    auto scope = enter(op);
    Value* r = op.Add(x, op.Mul(ff_in->forward(op, x), 0.5));
    Value* h = op.Add(r, attn->forward(op, norm_att->forward(op, r), mask));
    h = op.Add(h, conv->forward(op, h, length));
    h = op.Add(h, op.Mul(ff_out->forward(op, h), 0.5));
    return norm->forward(op, h);
  }
  AudioFeedForward *ff_in, *ff_out;
  AudioAttention* attn;
  AudioConvModule* conv;
  LayerNorm *norm_att, *norm;
};

// Phi4MultimodalAudioModel (encoder_embedding, embed, relative_attention_bias_layer, encoders).
class Encoder : public Module {
 public:
  explicit Encoder(const AudioSizes& s) : s_(s) {
    mean = param("encoder_embedding.global_mean", {s.input_size}, s.dtype);
    invstd = param("encoder_embedding.global_invstd", {s.input_size}, s.dtype);
    const int64_t c = s.channels;
    int64_t index = 0;  // torch.nn.Sequential indices: conv, act, then (dw, pw, act) per halving
    for (int64_t k = 1; k < s.time_reduction; k *= 2) {
      Stage st;
      st.spatial = conv_param(index, {c, 1, 3, 3}, st.spatial_bias);
      if (k > 1) st.pointwise = conv_param(index + 1, {c, c, 1, 1}, st.pointwise_bias);
      stages.push_back(st);
      index += k == 1 ? 2 : 3;
    }
    out = child<Linear>("embed.out", LinearOptions{c * s.final_size, s.hidden, true, s.dtype});
    const int64_t buckets = s.symmetric ? s.max_distance : 2 * s.max_distance;
    bias_values = param("relative_attention_bias_layer.bias_values.weight", {buckets, s.heads}, s.dtype);
    for (int64_t i = 0; i < s.num_layers; ++i)
      layers.push_back(child<AudioConformerLayer>("encoders." + std::to_string(i), s));
  }

  // features [B, F, input_size], mask bool [B, F] -> [B, T, hidden], T = ceil(F / time_reduction).
  Value* forward(Ops& op, Value* x, Value* mask) const {
    auto scope = enter(op);
    GraphBuilder& b = op.builder();
    const int64_t d = s_.hidden, c = s_.channels;
    x = op.Mul(op.Sub(x, mean->value(op)), invstd->value(op));
    // NeMo conv subsampling: [B, 1, F, input] -> [B, C, T, final] -> [B, T, C * final] -> out
    Value* h = op.Unsqueeze(x, {1});
    for (size_t i = 0; i < stages.size(); ++i) {
      const Stage& st = stages[i];
      h = op.Conv(h, st.spatial->value(op), st.spatial_bias->value(op),
                  ConvAttrs{{3, 3}, {2, 2}, {1, 1, 1, 1}, i == 0 ? 1 : c});
      if (st.pointwise)
        h = op.Conv(h, st.pointwise->value(op), st.pointwise_bias->value(op), ConvAttrs{{1, 1}, {1, 1}, {0, 0, 0, 0}, 1});
      h = activation(op, s_.nemo_act, h);
    }
    h = out->forward(op, op.Reshape(op.Transpose(h, {.perm = {0, 2, 1, 3}}), std::vector<int64_t>{0, 0, c * s_.final_size}));
    // padding mask: t < ceil(real frames / time_reduction), [B, T] int64
    Value* shape = op.Shape(h);
    Value* batch = op.Gather(shape, b.scalar_i64(0));
    Value* steps = op.Gather(shape, b.scalar_i64(1));
    Value* frames = op.ReduceSum(op.Cast(mask, {.to = DataType::INT64}), {1}, {.keepdims = 0});
    Value* real = op.Div(op.Add(frames, static_cast<double>(s_.time_reduction - 1)), static_cast<double>(s_.time_reduction));
    Value* t = op.Range(b.scalar_i64(0), steps, b.scalar_i64(1));
    Value* pad_mask = op.Cast(op.Less(op.Unsqueeze(t, {0}), op.Unsqueeze(real, {1})), {.to = DataType::INT64});
    // chunks of L = min(T, 500) steps (unfold_tensor), the last zero-padded: [B * n, L, d]
    Value* len = op.Min(steps, static_cast<double>(kMaxChunk));
    Value* n = op.Div(op.Sub(op.Add(steps, len), 1.0), len);
    Value* pad = op.Sub(op.Mul(n, len), steps);
    auto dims = [&](std::vector<Value*> v) {
      for (Value*& x : v) x = op.Unsqueeze(x, {0});
      return op.Concat(v, {.axis = 0});
    };
    Value* zeros = op.Expand(b.constant_float(std::vector<float>(1, 0.0f), {1, 1, 1}, s_.dtype), dims({batch, pad, b.scalar_i64(d)}));
    h = op.Reshape(op.Concat({h, zeros}, {.axis = 1}), dims({op.Mul(batch, n), len, b.scalar_i64(d)}));
    Value* no = op.Expand(b.constant_i64({0}, {1, 1}), dims({batch, pad}));
    Value* keys = op.Reshape(op.Concat({pad_mask, no}, {.axis = 1}), dims({op.Mul(batch, n), b.scalar_i64(1), len}));
    // the mask over one chunk's (query i, key j): keys AND streaming, as 0 / 1, plus the bias
    Value* i = op.Unsqueeze(op.Range(b.scalar_i64(0), len, b.scalar_i64(1)), {1});  // [L, 1]
    Value* j = op.Unsqueeze(op.Range(b.scalar_i64(0), len, b.scalar_i64(1)), {0});  // [1, L]
    Value* allowed = op.Cast(keys, {.to = DataType::BOOL});  // [B n, 1, L]
    if (s_.chunk_size > 0) {  // adaptive_enc_mask with uniform chunks, right_window 0
      const auto cs = static_cast<double>(s_.chunk_size);
      Value* chunk = op.Div(i, cs);
      Value* left = op.Mul(op.Max(op.Sub(chunk, static_cast<double>(s_.left_chunk)), 0.0), cs);
      Value* right = op.Mul(op.Add(chunk, 1.0), cs);
      allowed = op.And(allowed, op.Unsqueeze(op.And(op.GreaterOrEqual(j, left), op.Less(j, right)), {0}));
    }
    Value* rel = op.Min(op.Max(op.Sub(j, i), static_cast<double>(-s_.max_distance)), static_cast<double>(s_.max_distance - 1));
    Value* bucket = s_.symmetric ? op.Abs(rel) : op.Add(rel, static_cast<double>(s_.max_distance));
    Value* bias = op.Unsqueeze(op.Transpose(op.Gather(bias_values->value(op), bucket), {.perm = {2, 0, 1}}), {0});
    Value* attn_mask = op.Add(op.Unsqueeze(op.Cast(allowed, {.to = s_.dtype}), {1}), bias);  // [B n, heads, L, L]
    Value* conv_len = op.Unsqueeze(len, {0});
    for (const AudioConformerLayer* layer : layers) h = layer->forward(op, h, attn_mask, conv_len);
    h = op.Reshape(h, dims({batch, op.Mul(n, len), b.scalar_i64(d)}));
    return op.Slice(h, b.ints({0}), op.Unsqueeze(steps, {0}), b.ints({1}));
  }

  struct Stage {
    Parameter *spatial = nullptr, *spatial_bias = nullptr, *pointwise = nullptr, *pointwise_bias = nullptr;
  };
  Parameter *mean, *invstd, *bias_values;
  std::vector<Stage> stages;
  Linear* out;
  std::vector<AudioConformerLayer*> layers;

 private:
  Parameter* conv_param(int64_t index, const Shape& shape, Parameter*& bias) {
    const std::string p = "embed.conv." + std::to_string(index);
    bias = param(p + ".bias", {shape[0]}, s_.dtype);
    return param(p + ".weight", shape, s_.dtype);
  }
  AudioSizes s_;
};

}  // namespace phi4_audio

Phi4AudioEmbedding::Phi4AudioEmbedding(const HfConfig& a, int64_t text_hidden, DataType dtype) {
  phi4_audio::AudioSizes s;
  s.dtype = dtype;
  s.hidden = a.int_or("hidden_size", 1024);
  s.intermediate = a.int_or("intermediate_size", 1536);
  s.num_layers = a.int_or("num_blocks", 24);
  s.heads = a.int_or("num_attention_heads", 16);
  if (s.heads < 1 || s.hidden % s.heads != 0) a.fail("num_attention_heads", std::to_string(s.heads) + " must divide hidden_size " + std::to_string(s.hidden));
  s.kernel = a.int_or("kernel_size", 3);
  if (s.kernel < 1) a.fail("kernel_size", "must be at least 1");
  s.multiplier = a.int_or("depthwise_multiplier", 1);
  for (const char* f : {"ext_pw_out_channel", "depthwise_separable_out_channel"})
    if (a.int_or(f, 1024) != s.hidden)
      a.fail(f, "must equal hidden_size (" + std::to_string(s.hidden) +
                    "): the conv module's convolutions chain them into the residual");
  if (a.int_or("downsample_rate", 1) != 1)
    a.fail("downsample_rate", "only 1: Phi4MultimodalAudioEmbedding's projections take hidden_size * downsample_rate "
                              "features, which its encoder does not produce otherwise");
  s.channels = a.int_or("nemo_conv_channels", 1024);
  s.input_size = a.int_or("input_size", 80);
  s.time_reduction = a.int_or("time_reduction", 8);
  if (s.time_reduction < 2 || (s.time_reduction & (s.time_reduction - 1)) != 0)
    a.fail("time_reduction", "must be a power of two of at least 2 (the stride-2 convolutions)");
  s.final_size = s.input_size;
  for (int64_t k = 1; k < s.time_reduction; k *= 2) s.final_size = (s.final_size - 1) / 2 + 1;
  s.chunk_size = a.int_or("chunk_size", -1);
  s.left_chunk = a.int_or("left_chunk", 18);
  s.max_distance = a.int_or("bias_max_distance", 1000);
  if (s.max_distance < 1) a.fail("bias_max_distance", "must be at least 1");
  s.symmetric = a.bool_or("bias_symmetric", false);
  s.act = a.string_or("activation", "swish");
  s.conv_act = a.string_or("conv_activation", "swish");
  s.glu_act = a.string_or("conv_glu_type", "swish");
  s.nemo_act = a.string_or("nemo_activation", "relu");
  input_size_ = s.input_size;
  text_hidden_ = text_hidden;
  encoder_ = child<phi4_audio::Encoder>("encoder", s);
  up_speech_ = child<Linear>("up_proj_for_speech", LinearOptions{s.hidden, text_hidden, true, dtype});
  down_speech_ = child<Linear>("down_proj_for_speech", LinearOptions{text_hidden, text_hidden, true, dtype});
  up_vision_speech_ = child<Linear>("up_proj_for_vision_speech", LinearOptions{s.hidden, text_hidden, true, dtype});
  down_vision_speech_ = child<Linear>("down_proj_for_vision_speech", LinearOptions{text_hidden, text_hidden, true, dtype});
}

Value* Phi4AudioEmbedding::forward(Ops& op, Value* features, Value* mask, Value* sizes, Value* mode) const {
  auto scope = enter(op);
  GraphBuilder& b = op.builder();
  Value* h = encoder_->forward(op, features, mask);  // [B, T, audio hidden]
  Value* speech = down_speech_->forward(op, activation(op, "gelu", up_speech_->forward(op, h)));
  Value* both = down_vision_speech_->forward(op, activation(op, "gelu", up_vision_speech_->forward(op, h)));
  Value* y = op.Where(op.Equal(op.Reshape(mode, std::vector<int64_t>{}), 3.0), both, speech);  // [B, T, hidden]
  // the first sizes[b] rows of audio b: row b * T + (t - start_b) of the flattened [B * T, hidden]
  Value* steps = op.Gather(op.Shape(y), b.scalar_i64(1));
  Value* ends = op.CumSum(sizes, b.scalar_i64(0));
  Value* total = op.Reshape(op.ReduceSum(sizes, {0}, {.keepdims = 1}), std::vector<int64_t>{});
  Value* t = op.Range(b.scalar_i64(0), total, b.scalar_i64(1));
  Value* audio = op.ReduceSum(op.Cast(op.GreaterOrEqual(op.Unsqueeze(t, {1}), op.Unsqueeze(ends, {0})),
                                      {.to = DataType::INT64}),
                              {1}, {.keepdims = 0});
  Value* start = op.Sub(op.Gather(ends, audio), op.Gather(sizes, audio));
  Value* rows = op.Add(op.Mul(audio, steps), op.Sub(t, start));
  return op.Gather(op.Reshape(y, std::vector<int64_t>{-1, text_hidden_}), rows);
}

}  // namespace mobius
