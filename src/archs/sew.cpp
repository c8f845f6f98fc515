// SEW, squeezed and efficient wav2vec (transformers/models/sew/modular_sew.py, SEWModel): the
// wav2vec2 conv feature encoder (blocks/conv_feature_encoder.h), then
//   h = feature_projection(layer_norm(features))   (the Linear only when conv_dim[-1] != hidden_size)
// and SEWEncoder, which runs its post-norm Wav2Vec2 layers on a sequence squeezed in time:
//   pos = pos_conv_embed(h): the weight-norm position conv with stride squeeze_factor
//   pooled = AvgPool1d(squeeze_factor)(h)              (frames / squeeze_factor, floor)
//   h = layer_norm(pooled[:n] + pos[:n]), n = the shorter of the two; the layers
//   h = upsample: act(projection(h)) [.., n, hidden * squeeze_factor] viewed [.., n * squeeze_factor,
//       hidden], zero-padded at the end back to the encoder's input frames
// With an attention mask the padded frames are zeroed first and the squeezed frame j is valid
// when any frame of its window is (max_pool1d of the frame mask: j * squeeze_factor < length).
// The sizes and the attention_mask rule are wav2vec2's (archs/wav2vec2.h); the layers are always
// post-norm (SEWConfig has no do_stable_layer_norm).
#include "archs/archs.h"
#include "archs/wav2vec2.h"
#include "blocks/activation.h"
#include "tasks/audio_feature_extraction.h"

namespace mobius {
namespace {

// SEWUpsampling: [batch, n, hidden] -> [batch, n * squeeze_factor, hidden].
class Upsampling : public Module {
 public:
  Upsampling(int64_t hidden, int64_t squeeze_factor, std::string activation, DataType dtype)
      : hidden_(hidden), activation_(std::move(activation)) {
    projection = child<Linear>("projection", LinearOptions{hidden, hidden * squeeze_factor, true, dtype});
  }
  Value* forward(Ops& op, Value* x) const {
    auto s = enter(op);
    return op.Reshape(activation(op, activation_, projection->forward(op, x)), {0, -1, hidden_});
  }
  Linear* projection;

 private:
  int64_t hidden_;
  std::string activation_;
};

class SEWEncoder : public Module {
 public:
  SEWEncoder(const Wav2Vec2Sizes& s, int64_t squeeze_factor) : o_(s.encoder), squeeze_(squeeze_factor) {
    PosConvEmbeddingOptions p = s.pos_conv;
    p.stride = squeeze_factor;
    pos_conv_embed = child<WeightNormConvEmbedding>("pos_conv_embed", p);
    layer_norm = child<LayerNorm>("layer_norm", NormOptions{.dim = o_.hidden_size, .eps = o_.layer_norm_eps,
                                                            .dtype = o_.dtype, .kind = NormKind::LayerNorm});
    for (int64_t i = 0; i < o_.num_hidden_layers; ++i)
      layers.push_back(child<AudioEncoderLayer>("layers." + std::to_string(i), o_,
                                                std::make_unique<Wav2Vec2Attention>(o_)));
    upsample = child<Upsampling>("upsample", o_.hidden_size, squeeze_factor, s.features.activation, o_.dtype);
  }

  // h [batch, frames, hidden]; frames_valid bool [batch, frames] or null -> [batch, frames, hidden].
  Value* forward(Ops& op, Value* h, Value* frames_valid) const {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    if (frames_valid) h = op.Where(op.Unsqueeze(frames_valid, {-1}), h, 0.0);
    Value* frames = op.Shape(h, {.start = 1, .end = 2});  // [1]
    Value* pos = pos_conv_embed->forward(op, h);
    // AvgPool1d(squeeze, squeeze): the whole windows, each averaged
    Value* windows = op.Div(frames, static_cast<double>(squeeze_));
    Value* pooled = op.Slice(h, b.ints({0}), op.Mul(windows, static_cast<double>(squeeze_)), b.ints({1}));
    pooled = op.ReduceMean(op.Reshape(pooled, {0, -1, squeeze_, o_.hidden_size}), {2}, {.keepdims = 0});
    Value* n = op.Min(windows, op.Shape(pos, {.start = 1, .end = 2}));
    h = op.Add(op.Slice(pooled, b.ints({0}), n, b.ints({1})), op.Slice(pos, b.ints({0}), n, b.ints({1})));
    AudioAttentionContext ctx;
    if (frames_valid) {  // squeezed frame j: j * squeeze < the row's frames (any frame of its window)
      Value* lengths = op.ReduceSum(op.Cast(frames_valid, {.to = DataType::INT64}), {1}, {.keepdims = 0});
      Value* index = op.Mul(op.Range(0, op.Squeeze(n, {0}), 1), static_cast<double>(squeeze_));
      Value* valid = op.Less(op.Unsqueeze(index, {0}), op.Unsqueeze(lengths, {1}));
      ctx.mask = padding_mask(op, op.Cast(valid, {.to = DataType::INT64}), o_.dtype);
    }
    h = layer_norm->forward(op, h);
    for (const AudioEncoderLayer* layer : layers) h = layer->forward(op, h, ctx);
    h = upsample->forward(op, h);  // [batch, n * squeeze, hidden]
    // nn.functional.pad back to the input's frames
    Value* missing = op.Sub(frames, op.Shape(h, {.start = 1, .end = 2}));
    Value* zeros_shape = op.Concat({op.Shape(h, {.start = 0, .end = 1}), missing, b.ints({o_.hidden_size})}, {.axis = 0});
    Value* zeros = op.Expand(b.constant_float({0.0f}, {1, 1, 1}, o_.dtype), zeros_shape);
    return op.Concat({h, zeros}, {.axis = 1});
  }

  WeightNormConvEmbedding* pos_conv_embed;
  LayerNorm* layer_norm;
  std::vector<AudioEncoderLayer*> layers;
  Upsampling* upsample;

 private:
  AudioEncoderOptions o_;
  int64_t squeeze_;
};

class SEWModel : public AudioEncoder {
 public:
  SEWModel(const Wav2Vec2Sizes& s, int64_t squeeze_factor) : s_(s) {
    const int64_t conv_out = s.features.conv_dim.back();
    feature_extractor = child<ConvFeatureEncoder>(s.prefix + "feature_extractor", s.features);
    layer_norm = child<LayerNorm>(s.prefix + "layer_norm", NormOptions{.dim = conv_out, .eps = s.encoder.layer_norm_eps,
                                                                      .dtype = s.encoder.dtype,
                                                                      .kind = NormKind::LayerNorm});
    if (conv_out != s.encoder.hidden_size)
      feature_projection = child<Linear>(s.prefix + "feature_projection",
                                         LinearOptions{conv_out, s.encoder.hidden_size, true, s.encoder.dtype});
    encoder = child<SEWEncoder>(s.prefix + "encoder", s, squeeze_factor);
    if (s.ctc_vocab_size > 0)
      lm_head = child<Linear>("lm_head", LinearOptions{s.encoder.hidden_size, s.ctc_vocab_size, true, s.encoder.dtype});
  }
  DataType dtype() const override { return s_.encoder.dtype; }
  int64_t hidden_size() const override { return s_.encoder.hidden_size; }
  int64_t ctc_vocab_size() const override { return s_.ctc_vocab_size; }
  bool uses_attention_mask() const override { return s_.features.norm == FeatExtractNorm::layer; }

  AudioEncoderOutputs forward(Ops& op, Value* input_values, Value* attention_mask) const override {
    Value* features = feature_extractor->forward(op, input_values);
    Value* h = layer_norm->forward(op, features);
    if (feature_projection) h = feature_projection->forward(op, h);
    Value* valid = attention_mask ? feature_extractor->frames_valid(op, attention_mask, features) : nullptr;
    h = encoder->forward(op, h, valid);
    return {h, lm_head ? lm_head->forward(op, h) : nullptr};
  }

  ConvFeatureEncoder* feature_extractor;
  LayerNorm* layer_norm;
  Linear* feature_projection = nullptr;
  SEWEncoder* encoder;
  Linear* lm_head = nullptr;

 private:
  Wav2Vec2Sizes s_;
};

}  // namespace

std::unique_ptr<Architecture> create_sew(const HfConfig& c, DataType dtype) {
  Wav2Vec2Sizes s = wav2vec2_sizes(c, dtype, "sew");
  s.encoder.placement = NormPlacement::post;
  const int64_t squeeze_factor = c.int_or("squeeze_factor", 2);
  if (squeeze_factor < 1 || squeeze_factor > kMaxPositions) c.fail("squeeze_factor", "expected a value in [1, 2^24]");
  return std::make_unique<SEWModel>(s, squeeze_factor);
}

}  // namespace mobius
