// A 1-D convolution over [batch, channels, length] (torch.nn.Conv1d, zero padding), lowered to
// the ONNX Conv op; checkpoint keys weight [out_channels, in_channels / groups, kernel_size] and
// bias [out_channels]. Whisper's front-end (transformers/models/whisper/modeling_whisper.py
// WhisperEncoder.conv1 / conv2), the wav2vec2 family's feature encoder, positional conv and
// conformer convolutions (blocks/conv_feature_encoder.h, pos_conv_embedding.h, conformer.h).
#pragma once

#include "nn/module.h"

namespace mobius {

struct Conv1dOptions {
  int64_t in_channels;
  int64_t out_channels;
  int64_t kernel_size;
  int64_t stride = 1;
  int64_t padding = 0;  // on both sides
  int64_t groups = 1;
  bool bias = true;
  DataType dtype = DataType::FLOAT;
};

class Conv1d : public Module {
 public:
  explicit Conv1d(const Conv1dOptions& o);
  // x [batch, in_channels, length] -> [batch, out_channels,
  //   (length + 2 * padding - kernel_size) / stride + 1], in x's dtype.
  Value* forward(Ops& op, Value* x) const;

  Parameter* weight;
  Parameter* bias = nullptr;

 private:
  Conv1dOptions o_;
};

}  // namespace mobius
