// A 3-D convolution over [batch, channels, frames, height, width] (torch.nn.Conv3d, zero padding,
// dilation 1, groups 1), lowered to the ONNX Conv op (N-d); checkpoint keys weight [out_channels,
// in_channels, kernel_t, kernel_h, kernel_w] and bias [out_channels]. The patch embedding of
// diffusers' video transformers (diffusers/models/transformers/transformer_wan.py
// WanTransformer3DModel.patch_embedding: kernel = stride = patch_size).
#pragma once

#include <array>

#include "nn/module.h"

namespace mobius {

struct Conv3dOptions {
  int64_t in_channels;
  int64_t out_channels;
  std::array<int64_t, 3> kernel;  // frames, height, width
  std::array<int64_t, 3> stride = {1, 1, 1};
  // [front, top, left, back, bottom, right] (the ONNX pads order)
  std::array<int64_t, 6> pads = {0, 0, 0, 0, 0, 0};
  bool bias = true;
  DataType dtype = DataType::FLOAT;
};

class Conv3d : public Module {
 public:
  explicit Conv3d(const Conv3dOptions& o);
  // x [batch, in_channels, f, h, w] -> [batch, out_channels, (f + pad_f - kernel_t) / stride_t + 1,
  // ...] in x's dtype.
  Value* forward(Ops& op, Value* x) const;

  Parameter* weight;
  Parameter* bias = nullptr;

 private:
  Conv3dOptions o_;
};

}  // namespace mobius
