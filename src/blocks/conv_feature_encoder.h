// The convolutional front-end of the wav2vec2 family on the raw waveform
// (transformers/models/wav2vec2/modeling_wav2vec2.py Wav2Vec2FeatureEncoder, shared by hubert,
// data2vec-audio, unispeech(-sat), wavlm, sew, sew-d and wav2vec2-conformer through `# Copied
// from` / modular inheritance):
//   conv_layers.{i}: Conv1d(conv_dim[i-1] or 1 -> conv_dim[i], kernel conv_kernel[i],
//                    stride conv_stride[i], bias conv_bias), then
//     feat_extract_norm "group": layer 0 GroupNorm(conv_dim[0] groups, affine; eps 1e-5) as
//                                Wav2Vec2GroupNormConvLayer, the others no norm (NoLayerNormConvLayer)
//     feat_extract_norm "layer": every layer LayerNorm over the channels (eps 1e-5)
//                                (Wav2Vec2LayerNormConvLayer)
//   then feat_extract_activation.
// GroupNorm with one group per channel is ONNX InstanceNormalization.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "blocks/conv.h"
#include "nn/module.h"

namespace mobius {

enum class FeatExtractNorm { group, layer };  // config feat_extract_norm

struct ConvFeatureEncoderOptions {
  std::vector<int64_t> conv_dim, conv_kernel, conv_stride;  // one entry per layer
  bool conv_bias = false;
  FeatExtractNorm norm = FeatExtractNorm::group;
  std::string activation = "gelu";  // feat_extract_activation
  DataType dtype = DataType::FLOAT;
};

// One conv_layers.{i}: conv, its norm ("layer_norm": GroupNorm or LayerNorm, or none), activation.
// forward: [batch, in, length] -> [batch, out, frames].
class FeatureConvLayer : public Module {
 public:
  FeatureConvLayer(const Conv1dOptions& conv, std::optional<FeatExtractNorm> norm, std::string activation);
  Value* forward(Ops& op, Value* x) const;
  Conv1d* conv;
  Parameter *norm_weight = nullptr, *norm_bias = nullptr;  // layer_norm.weight, .bias [out]

 private:
  std::optional<FeatExtractNorm> norm_;
  std::string activation_;
};

// Wav2Vec2FeatureEncoder; register it as "feature_extractor".
class ConvFeatureEncoder : public Module {
 public:
  explicit ConvFeatureEncoder(const ConvFeatureEncoderOptions& o);
  // input_values [batch, samples] -> extract_features [batch, frames, conv_dim.back()].
  Value* forward(Ops& op, Value* input_values) const;
  // The frames of `lengths` samples (Wav2Vec2PreTrainedModel._get_feat_extract_output_lengths
  // without an adapter): floor((length - kernel) / stride) + 1 per layer. lengths: int64 [batch].
  Value* output_lengths(Ops& op, Value* lengths) const;
  // Which frames hold a row's audio (Wav2Vec2PreTrainedModel._get_feature_vector_attention_mask):
  // frame t of row b when t < output_lengths(sum(attention_mask[b])). attention_mask: int64
  // [batch, samples] (right padding); features: forward's output. Returns bool [batch, frames].
  Value* frames_valid(Ops& op, Value* attention_mask, Value* features) const;

 private:
  std::vector<FeatureConvLayer*> layers_;
  ConvFeatureEncoderOptions o_;
};

}  // namespace mobius
