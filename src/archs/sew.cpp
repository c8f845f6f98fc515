// SEW, squeezed and efficient wav2vec (transformers/models/sew/modular_sew.py, SEWModel): the
// wav2vec2 conv feature encoder and skeleton (archs/wav2vec2.h) with SEW's feature projection and
// squeezed encoder (archs/sew.h), whose layers here are the post-norm Wav2Vec2 layers after a
// LayerNorm:
//   h = layer_norm(h); each layer h = AudioEncoderLayer(h)   (encoder.layer_norm, encoder.layers.{i})
// The sizes and the attention_mask rule are wav2vec2's; the layers are always post-norm
// (SEWConfig has no do_stable_layer_norm); the conv layers default to SEWConfig's 13.
#include "archs/sew.h"

#include "archs/archs.h"
#include "blocks/activation.h"
#include "tasks/audio_feature_extraction.h"

namespace mobius {
namespace {

// SEWModel: layer_norm over the conv features, then feature_projection when the widths differ.
class SEWFeatureProjection : public FeatureProjectionPart {
 public:
  SEWFeatureProjection(const Wav2Vec2Sizes& s, float eps) {
    const int64_t conv_out = s.features.conv_dim.back();
    layer_norm = child<LayerNorm>("layer_norm", NormOptions{.dim = conv_out, .eps = eps, .dtype = s.encoder.dtype,
                                                            .kind = NormKind::LayerNorm});
    if (conv_out != s.encoder.hidden_size)
      feature_projection = child<Linear>("feature_projection",
                                         LinearOptions{conv_out, s.encoder.hidden_size, true, s.encoder.dtype});
  }
  Value* forward(Ops& op, Value* x) const override {
    Value* h = layer_norm->forward(op, x);
    return feature_projection ? feature_projection->forward(op, h) : h;
  }
  LayerNorm* layer_norm;
  Linear* feature_projection = nullptr;
};

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

// SEWEncoder / SEWDEncoder around the injected layers.
class SEWEncoder : public SpeechEncoderBody {
 public:
  SEWEncoder(const Wav2Vec2Sizes& s, int64_t squeeze_factor, const std::string& layers_name,
             std::unique_ptr<SpeechEncoderBody> inner)
      : hidden_(s.encoder.hidden_size), dtype_(s.encoder.dtype), squeeze_(squeeze_factor) {
    PosConvEmbeddingOptions p = s.pos_conv;
    p.stride = squeeze_factor;
    pos_conv_embed = child<WeightNormConvEmbedding>("pos_conv_embed", p);
    layers = adopt(layers_name, std::move(inner));
    upsample = child<Upsampling>("upsample", hidden_, squeeze_factor, s.features.activation, dtype_);
  }

  // h [batch, frames, hidden]; frames_valid bool [batch, frames] or null -> [batch, frames, hidden].
  Value* forward(Ops& op, Value* h, Value* frames_valid) const override {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    if (frames_valid) h = op.Where(op.Unsqueeze(frames_valid, {-1}), h, 0.0);
    Value* frames = op.Shape(h, {.start = 1, .end = 2});  // [1]
    Value* pos = pos_conv_embed->forward(op, h);
    // AvgPool1d(squeeze, squeeze): the whole windows, each averaged
    Value* windows = op.Div(frames, static_cast<double>(squeeze_));
    Value* pooled = op.Slice(h, b.ints({0}), op.Mul(windows, static_cast<double>(squeeze_)), b.ints({1}));
    pooled = op.ReduceMean(op.Reshape(pooled, {0, -1, squeeze_, hidden_}), {2}, {.keepdims = 0});
    Value* n = op.Min(windows, op.Shape(pos, {.start = 1, .end = 2}));
    h = op.Add(op.Slice(pooled, b.ints({0}), n, b.ints({1})), op.Slice(pos, b.ints({0}), n, b.ints({1})));
    Value* valid = nullptr;
    if (frames_valid) {  // squeezed frame j: j * squeeze < the row's frames (any frame of its window)
      Value* lengths = op.ReduceSum(op.Cast(frames_valid, {.to = DataType::INT64}), {1}, {.keepdims = 0});
      Value* index = op.Mul(op.Range(0, op.Squeeze(n, {0}), 1), static_cast<double>(squeeze_));
      valid = op.Less(op.Unsqueeze(index, {0}), op.Unsqueeze(lengths, {1}));
    }
    h = upsample->forward(op, layers->forward(op, h, valid));  // [batch, n * squeeze, hidden]
    // nn.functional.pad back to the input's frames
    Value* missing = op.Sub(frames, op.Shape(h, {.start = 1, .end = 2}));
    Value* zeros_shape = op.Concat({op.Shape(h, {.start = 0, .end = 1}), missing, b.ints({hidden_})}, {.axis = 0});
    Value* zeros = op.Expand(b.constant_float({0.0f}, {1, 1, 1}, dtype_), zeros_shape);
    return op.Concat({h, zeros}, {.axis = 1});
  }

  WeightNormConvEmbedding* pos_conv_embed;
  SpeechEncoderBody* layers;
  Upsampling* upsample;

 private:
  int64_t hidden_;
  DataType dtype_;
  int64_t squeeze_;
};

// SEW's layers: layer_norm, then the post-norm Wav2Vec2 layers (registered at the encoder's path).
class SEWLayers : public SpeechEncoderBody {
 public:
  explicit SEWLayers(const AudioEncoderOptions& o) : o_(o) {
    layer_norm = child<LayerNorm>("layer_norm", NormOptions{.dim = o.hidden_size, .eps = o.layer_norm_eps,
                                                            .dtype = o.dtype, .kind = NormKind::LayerNorm});
    for (int64_t i = 0; i < o.num_hidden_layers; ++i)
      layers.push_back(child<AudioEncoderLayer>("layers." + std::to_string(i), o, std::make_unique<Wav2Vec2Attention>(o)));
  }
  Value* forward(Ops& op, Value* h, Value* valid) const override {
    AudioAttentionContext ctx;
    if (valid) ctx.mask = padding_mask(op, op.Cast(valid, {.to = DataType::INT64}), o_.dtype);
    h = layer_norm->forward(op, h);
    for (const AudioEncoderLayer* layer : layers) h = layer->forward(op, h, ctx);
    return h;
  }
  LayerNorm* layer_norm;
  std::vector<AudioEncoderLayer*> layers;

 private:
  AudioEncoderOptions o_;
};

}  // namespace

ConvLayout sew_conv_layout() {
  return {{64, 128, 128, 128, 128, 256, 256, 256, 256, 512, 512, 512, 512},
          {10, 3, 1, 3, 1, 3, 1, 3, 1, 2, 1, 2, 1},
          {5, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1}};
}

int64_t sew_squeeze_factor(const HfConfig& c) {
  const int64_t squeeze_factor = c.int_or("squeeze_factor", 2);
  if (squeeze_factor < 1 || squeeze_factor > kMaxPositions) c.fail("squeeze_factor", "expected a value in [1, 2^24]");
  return squeeze_factor;
}

std::unique_ptr<Architecture> make_sew_family(const Wav2Vec2Sizes& s, int64_t squeeze_factor,
                                              float feature_layer_norm_eps, const std::string& layers_name,
                                              std::unique_ptr<SpeechEncoderBody> layers) {
  // SEWModel's layer_norm and feature_projection sit at the base model's top level
  const std::string top = s.prefix.empty() ? "" : s.prefix.substr(0, s.prefix.size() - 1);
  return make_wav2vec2_family(s, top, std::make_unique<SEWFeatureProjection>(s, feature_layer_norm_eps),
                              std::make_unique<SEWEncoder>(s, squeeze_factor, layers_name, std::move(layers)));
}

std::unique_ptr<Architecture> create_sew(const HfConfig& c, DataType dtype) {
  Wav2Vec2Sizes s = wav2vec2_sizes(c, dtype, "sew", sew_conv_layout());
  s.encoder.placement = NormPlacement::post;
  return make_sew_family(s, sew_squeeze_factor(c), s.encoder.layer_norm_eps, "",
                         std::make_unique<SEWLayers>(s.encoder));
}

}  // namespace mobius
