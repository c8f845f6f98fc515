// The wav2vec2 family's model skeleton (archs/wav2vec2.cpp), which wavlm.cpp composes with its
// own attention and wav2vec2_conformer.cpp with the conformer stack: conv feature encoder -> feature_projection -> transformer encoder -> (lm_head).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "blocks/audio_encoder.h"
#include "blocks/conv_feature_encoder.h"
#include "blocks/pos_conv_embedding.h"
#include "config/hf_config.h"
#include "tasks/architecture.h"

namespace mobius {

// The conv feature encoder's layers: conv_dim, conv_kernel, conv_stride.
struct ConvLayout {
  std::vector<int64_t> dim, kernel, stride;
};

// Wav2Vec2Config's default 7 layers (512 channels, kernels 10 3 3 3 3 2 2, strides 5 2 2 2 2 2 2).
ConvLayout wav2vec2_conv_layout();

// The parts' options as Wav2Vec2Config gives them.
struct Wav2Vec2Sizes {
  ConvFeatureEncoderOptions features;
  AudioEncoderOptions encoder;
  PosConvEmbeddingOptions pos_conv;  // WeightNormConvEmbedding's
  bool projection_norm = true;       // feature_projection.layer_norm
  std::string prefix;                // "" for a *Model checkpoint, else base_model_prefix + "."
  int64_t ctc_vocab_size = 0;        // *ForCTC: vocab_size, else 0 (no lm_head)
};

// Reads conv_dim / conv_kernel / conv_stride (the config class' 7-layer tuples when absent),
// conv_bias (conv_defaults: the config class' layers when the lists are absent), feat_extract_norm, feat_extract_activation, hidden_size, num_hidden_layers,
// num_attention_heads, intermediate_size, hidden_act, layer_norm_eps, do_stable_layer_norm,
// num_conv_pos_embeddings, num_conv_pos_embedding_groups and `architectures` (the prefix and the
// CTC head; `base_model_prefix` is the type's, e.g. "wav2vec2"). Throws mobius::Error naming the
// field on a bad value, and on add_adapter / adapter_attn_dim (not supported).
Wav2Vec2Sizes wav2vec2_sizes(const HfConfig& c, DataType dtype, const char* base_model_prefix,
                            const ConvLayout& conv_defaults = wav2vec2_conv_layout());

// What runs between the conv features and the encoder: [batch, frames, conv_dim[-1]] ->
// [batch, frames, hidden_size]. Wav2Vec2FeatureProjection, or SEW's LayerNorm + Linear (archs/sew.h).
class FeatureProjectionPart : public Module {
 public:
  virtual Value* forward(Ops& op, Value* features) const = 0;
};

// The model (task audio-feature-extraction) of `s` with `encoder` (AudioTransformerEncoder, or
// the conformer stack) after Wav2Vec2FeatureProjection (`feature_projection`).
std::unique_ptr<Architecture> make_wav2vec2_family(const Wav2Vec2Sizes& s, std::unique_ptr<SpeechEncoderBody> encoder);

// The same skeleton with another projection, registered as `projection_name` (a full path in the
// checkpoint, "" for the top level).
std::unique_ptr<Architecture> make_wav2vec2_family(const Wav2Vec2Sizes& s, const std::string& projection_name,
                                                   std::unique_ptr<FeatureProjectionPart> projection,
                                                   std::unique_ptr<SpeechEncoderBody> encoder);

}  // namespace mobius
