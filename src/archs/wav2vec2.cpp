// The wav2vec2 family of speech encoders on the raw waveform (task audio-feature-extraction,
// docs/audio.md): conv feature encoder (blocks/conv_feature_encoder.h) -> feature_projection
// (LayerNorm over conv_dim[-1], Linear to hidden_size) -> transformer encoder
// (blocks/audio_encoder.h) with a convolutional position embedding (blocks/pos_conv_embedding.h)
// -> last_hidden_state, and for a *ForCTC checkpoint lm_head -> logits. The members compose
// these parts (transformers/models/<type>/modeling_<type>.py):
//   wav2vec2        Wav2Vec2Model: feat_extract_norm "group" | "layer", do_stable_layer_norm
//                   (pre-norm layers, final LayerNorm), weight-norm position conv
//   unispeech, unispeech-sat
//                   UniSpeech(Sat)Model: as wav2vec2 (their encoders are Wav2Vec2Encoder copies)
//   hubert          HubertModel: as wav2vec2; feature_projection.layer_norm only with
//                   feat_proj_layer_norm (default true); conv_pos_batch_norm is refused
//   data2vec-audio  Data2VecAudioModel: LayerNorm conv layers whatever feat_extract_norm says,
//                   post-norm encoder, a stack of num_conv_pos_embeddings plain convs (kernel
//                   conv_pos_kernel_size) as the position embedding
// The checkpoint's keys: a *Model checkpoint (architectures absent or "...Model") has the
// parts at the top level; any other head (ForCTC, ForPreTraining, ...) nests them under the
// type's base_model_prefix ("wav2vec2.", "hubert.", "data2vec_audio.", "unispeech.",
// "unispeech_sat."). Only ForCTC's lm_head is built; other heads' tensors stay unused.
// attention_mask is a graph input when the conv layers use LayerNorm (feat_extract_norm "layer",
// data2vec-audio): the checkpoints whose feature extractor returns an attention mask
// (return_attention_mask); the group-norm models were trained on zero-padded batches without one.
// Not supported (named errors): add_adapter, adapter_attn_dim (MMS adapters), the batch-norm
// position conv of hubert.
#include "archs/wav2vec2.h"

#include <cmath>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/audio_encoder.h"
#include "blocks/conv_feature_encoder.h"
#include "blocks/pos_conv_embedding.h"
#include "tasks/audio_feature_extraction.h"
#include "util/error.h"

namespace mobius {
namespace {

// A list of positive integer sizes (conv_dim, conv_kernel, conv_stride), or the config class'
// default when absent (Wav2Vec2Config and the members: the same tuples).
std::vector<int64_t> size_list(const HfConfig& c, const std::string& key, std::vector<int64_t> fallback) {
  if (!c.has(key)) return fallback;
  std::vector<int64_t> out;
  for (double v : c.float_list(key)) {
    // the range before the conversion (a float beyond int64, 1e30, is undefined behaviour to convert)
    if (!(v >= 1 && v <= static_cast<double>(kMaxHiddenSize)) || v != std::trunc(v))
      c.fail(key, "expected integers in [1, " + std::to_string(kMaxHiddenSize) + "]");
    out.push_back(static_cast<int64_t>(v));
  }
  if (out.empty() || out.size() > static_cast<size_t>(kMaxLayers))
    c.fail(key, "expected 1 to " + std::to_string(kMaxLayers) + " entries");
  return out;
}

// `act`, read from field `key`, if mobius has it (not xielu, a module with parameters).
std::string checked_activation(const HfConfig& c, const std::string& key, std::string act) {
  if (!is_known_activation(act) || act == "xielu") c.fail(key, "unsupported activation '" + act + "'");
  return act;
}

// What differs between the members.
struct Wav2Vec2Member {
  const char* base_model_prefix;
  // data2vec-audio: LayerNorm conv layers, the post-norm encoder and the stacked position conv
  // (its config class has no feat_extract_norm or do_stable_layer_norm: such fields are foreign)
  bool data2vec_audio_layout = false;
  bool optional_projection_norm = false;  // hubert: feat_proj_layer_norm
};

struct Sizes : Wav2Vec2Sizes {
  int64_t pos_conv_layers = 0;  // StackedConvEmbedding (data2vec-audio)
};

Sizes read_sizes(const HfConfig& c, DataType dtype, const Wav2Vec2Member& m, const ConvLayout& conv) {
  Sizes s;
  if (c.bool_or("add_adapter", false))
    c.fail("add_adapter", "the adapter after the encoder is not supported (only add_adapter false)");
  if (c.has("adapter_attn_dim"))
    c.fail("adapter_attn_dim", "attention adapters (MMS) are not supported (only adapter_attn_dim null)");
  ConvFeatureEncoderOptions& f = s.features;
  f.conv_dim = size_list(c, "conv_dim", conv.dim);
  f.conv_kernel = size_list(c, "conv_kernel", conv.kernel);
  f.conv_stride = size_list(c, "conv_stride", conv.stride);
  if (f.conv_kernel.size() != f.conv_dim.size() || f.conv_stride.size() != f.conv_dim.size())
    c.fail("conv_dim", "conv_dim, conv_kernel and conv_stride must have the same length");
  f.conv_bias = c.bool_or("conv_bias", false);
  f.activation = checked_activation(c, "feat_extract_activation", c.string_or("feat_extract_activation", "gelu"));
  f.dtype = dtype;
  if (m.data2vec_audio_layout) {
    f.norm = FeatExtractNorm::layer;
  } else {
    const std::string norm = c.string_or("feat_extract_norm", "group");
    if (norm != "group" && norm != "layer")
      c.fail("feat_extract_norm", "expected 'group' or 'layer', got '" + norm + "'");
    f.norm = norm == "layer" ? FeatExtractNorm::layer : FeatExtractNorm::group;
  }

  AudioEncoderOptions& e = s.encoder;
  e.hidden_size = c.get_int("hidden_size");
  e.num_hidden_layers = c.get_int("num_hidden_layers");
  e.num_attention_heads = c.get_int("num_attention_heads");
  if (e.hidden_size % e.num_attention_heads != 0) c.fail("num_attention_heads", "must divide hidden_size");
  e.intermediate_size = c.get_int("intermediate_size");
  e.hidden_act = checked_activation(c, "hidden_act", c.string_or("hidden_act", "gelu"));
  e.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-5));
  const bool stable = !m.data2vec_audio_layout && c.bool_or("do_stable_layer_norm", false);
  e.placement = stable ? NormPlacement::pre : NormPlacement::post;
  e.dtype = dtype;

  PosConvEmbeddingOptions& p = s.pos_conv;
  p.hidden_size = e.hidden_size;
  p.groups = c.int_or("num_conv_pos_embedding_groups", 16);
  if (p.groups < 1 || e.hidden_size % p.groups != 0)
    c.fail("num_conv_pos_embedding_groups", "must divide hidden_size");
  p.activation = f.activation;
  p.dtype = dtype;
  const char* kernel = m.data2vec_audio_layout ? "conv_pos_kernel_size" : "num_conv_pos_embeddings";
  if (m.data2vec_audio_layout) {
    p.kernel_size = c.int_or("conv_pos_kernel_size", 19);
    s.pos_conv_layers = c.int_or("num_conv_pos_embeddings", 5);
    if (s.pos_conv_layers < 0 || s.pos_conv_layers > kMaxLayers)
      c.fail("num_conv_pos_embeddings", "expected 0 to " + std::to_string(kMaxLayers) + " layers");
  } else {
    p.kernel_size = c.int_or("num_conv_pos_embeddings", 128);
  }
  if (p.kernel_size < 1 || p.kernel_size > kMaxHiddenSize)
    c.fail(kernel, "expected a kernel size in [1, " + std::to_string(kMaxHiddenSize) + "]");
  if (m.optional_projection_norm) {
    s.projection_norm = c.bool_or("feat_proj_layer_norm", true);
    if (c.bool_or("conv_pos_batch_norm", false))
      c.fail("conv_pos_batch_norm", "the batch-norm position conv is not supported (only the weight-norm one)");
  }

  std::string arch;
  if (c.json().contains("architectures") && c.json()["architectures"].is_array() && !c.json()["architectures"].empty() &&
      c.json()["architectures"][0].is_string())
    arch = c.json()["architectures"][0].get<std::string>();
  const bool base = arch.empty() || arch.ends_with("Model");
  s.prefix = base ? "" : std::string(m.base_model_prefix) + ".";
  if (arch.ends_with("ForCTC")) s.ctc_vocab_size = c.get_int("vocab_size");
  return s;
}

// Wav2Vec2FeatureProjection (hubert: the LayerNorm optional). forward: [batch, frames,
// conv_dim[-1]] -> [batch, frames, hidden].
class FeatureProjection : public FeatureProjectionPart {
 public:
  FeatureProjection(int64_t in, int64_t hidden, float eps, bool norm, DataType dtype) {
    if (norm)
      layer_norm = child<LayerNorm>("layer_norm", NormOptions{.dim = in, .eps = eps, .dtype = dtype,
                                                              .kind = NormKind::LayerNorm});
    projection = child<Linear>("projection", LinearOptions{in, hidden, true, dtype});
  }
  Value* forward(Ops& op, Value* x) const override {
    auto s = enter(op);
    return projection->forward(op, layer_norm ? layer_norm->forward(op, x) : x);
  }
  LayerNorm* layer_norm = nullptr;
  Linear* projection;
};

class Wav2Vec2Family : public AudioEncoder {
 public:
  Wav2Vec2Family(const Wav2Vec2Sizes& s, const std::string& projection_name,
                 std::unique_ptr<FeatureProjectionPart> projection, std::unique_ptr<SpeechEncoderBody> body)
      : s_(s) {
    feature_extractor = child<ConvFeatureEncoder>(s.prefix + "feature_extractor", s.features);
    feature_projection = adopt(projection_name, std::move(projection));
    encoder = adopt(s.prefix + "encoder", std::move(body));
    if (s.ctc_vocab_size > 0)
      lm_head = child<Linear>("lm_head", LinearOptions{s.encoder.hidden_size, s.ctc_vocab_size, true, s.encoder.dtype});
  }
  DataType dtype() const override { return s_.encoder.dtype; }
  int64_t hidden_size() const override { return s_.encoder.hidden_size; }
  int64_t ctc_vocab_size() const override { return s_.ctc_vocab_size; }
  bool uses_attention_mask() const override { return s_.features.norm == FeatExtractNorm::layer; }

  AudioEncoderOutputs forward(Ops& op, Value* input_values, Value* attention_mask) const override {
    Value* features = feature_extractor->forward(op, input_values);  // [batch, frames, conv_dim[-1]]
    Value* frames_valid = attention_mask ? feature_extractor->frames_valid(op, attention_mask, features) : nullptr;
    Value* h = encoder->forward(op, feature_projection->forward(op, features), frames_valid);
    return {h, lm_head ? lm_head->forward(op, h) : nullptr};
  }

  ConvFeatureEncoder* feature_extractor;
  FeatureProjectionPart* feature_projection;
  SpeechEncoderBody* encoder;
  Linear* lm_head = nullptr;

 private:
  Wav2Vec2Sizes s_;
};

std::unique_ptr<Architecture> make(const HfConfig& c, DataType dtype, const Wav2Vec2Member& m) {
  Sizes s = read_sizes(c, dtype, m, wav2vec2_conv_layout());
  std::unique_ptr<PositionConvEmbedding> pos;
  if (m.data2vec_audio_layout) pos = std::make_unique<StackedConvEmbedding>(s.pos_conv, s.pos_conv_layers);
  else pos = std::make_unique<WeightNormConvEmbedding>(s.pos_conv);
  return make_wav2vec2_family(s, std::make_unique<AudioTransformerEncoder>(s.encoder, std::move(pos), [&](int64_t) {
                                return std::make_unique<Wav2Vec2Attention>(s.encoder);
                              }));
}

}  // namespace

ConvLayout wav2vec2_conv_layout() {
  return {{512, 512, 512, 512, 512, 512, 512}, {10, 3, 3, 3, 3, 2, 2}, {5, 2, 2, 2, 2, 2, 2}};
}

Wav2Vec2Sizes wav2vec2_sizes(const HfConfig& c, DataType dtype, const char* base_model_prefix,
                            const ConvLayout& conv_defaults) {
  return read_sizes(c, dtype, {.base_model_prefix = base_model_prefix}, conv_defaults);
}

std::unique_ptr<Architecture> make_wav2vec2_family(const Wav2Vec2Sizes& s, std::unique_ptr<SpeechEncoderBody> encoder) {
  auto projection = std::make_unique<FeatureProjection>(s.features.conv_dim.back(), s.encoder.hidden_size,
                                                        s.encoder.layer_norm_eps, s.projection_norm, s.encoder.dtype);
  return make_wav2vec2_family(s, s.prefix + "feature_projection", std::move(projection), std::move(encoder));
}

std::unique_ptr<Architecture> make_wav2vec2_family(const Wav2Vec2Sizes& s, const std::string& projection_name,
                                                   std::unique_ptr<FeatureProjectionPart> projection,
                                                   std::unique_ptr<SpeechEncoderBody> encoder) {
  return std::make_unique<Wav2Vec2Family>(s, projection_name, std::move(projection), std::move(encoder));
}

std::unique_ptr<Architecture> create_wav2vec2(const HfConfig& c, DataType dtype) {
  return make(c, dtype, {.base_model_prefix = "wav2vec2"});
}

std::unique_ptr<Architecture> create_hubert(const HfConfig& c, DataType dtype) {
  return make(c, dtype, {.base_model_prefix = "hubert", .optional_projection_norm = true});
}

std::unique_ptr<Architecture> create_data2vec_audio(const HfConfig& c, DataType dtype) {
  return make(c, dtype, {.base_model_prefix = "data2vec_audio", .data2vec_audio_layout = true});
}

std::unique_ptr<Architecture> create_unispeech(const HfConfig& c, DataType dtype) {
  return make(c, dtype, {.base_model_prefix = "unispeech"});
}

std::unique_ptr<Architecture> create_unispeech_sat(const HfConfig& c, DataType dtype) {
  return make(c, dtype, {.base_model_prefix = "unispeech_sat"});
}

}  // namespace mobius
