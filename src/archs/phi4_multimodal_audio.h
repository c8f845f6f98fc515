// Phi-4-multimodal's audio part (transformers/models/phi4_multimodal/modeling_phi4_multimodal.py
// Phi4MultimodalAudioEmbedding), registered at model.embed_tokens_extend.audio_embed by
// archs/phi4_multimodal.cpp, as onnxruntime-genai 0.18's phi4mm speech graph computes it.
#pragma once

#include "config/hf_config.h"
#include "nn/module.h"

namespace mobius {

class Linear;
namespace phi4_audio {
class Encoder;
}

class Phi4AudioEmbedding : public Module {
 public:
  // audio_config: the audio_config object of config.json after its class defaults
  // (Phi4MultimodalAudioConfig); text_hidden: the decoder's hidden_size. Throws mobius::Error
  // naming the field for sizes the modules cannot take (time_reduction not a power of two,
  // ext_pw_out_channel or depthwise_separable_out_channel other than hidden_size, heads not
  // dividing hidden_size, downsample_rate other than 1, an unknown activation).
  Phi4AudioEmbedding(const HfConfig& audio_config, int64_t text_hidden, DataType dtype);

  // features [batch, frames, input_size] in the model dtype (log-mel frames),
  // mask bool [batch, frames] (true = a real frame), sizes int64 [batch] (each audio's tokens),
  // mode int64 [1] (onnxruntime-genai's audio_projection_mode: 3 = vision and speech, which takes
  // the *_for_vision_speech projection as transformers does with image inputs; else *_for_speech)
  // -> audio_features [sum(sizes), text_hidden]: encoder (mean-variance norm, NeMo conv
  // subsampling by time_reduction, conformer blocks in chunks of at most 500 steps), projection
  // (up, GELU (erf), down), the first sizes[b] rows of audio b, concatenated.
  Value* forward(Ops& op, Value* features, Value* mask, Value* sizes, Value* mode) const;

  int64_t input_size() const { return input_size_; }

 private:
  phi4_audio::Encoder* encoder_;
  Linear *up_speech_, *down_speech_, *up_vision_speech_, *down_vision_speech_;
  int64_t input_size_, text_hidden_;
};

}  // namespace mobius
