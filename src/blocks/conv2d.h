// A 2-D convolution over [batch, channels, height, width] (torch.nn.Conv2d, zero padding, dilation
// 1), lowered to the ONNX Conv op; checkpoint keys weight [out_channels, in_channels / groups,
// kernel_size, kernel_size] and bias [out_channels]. diffusers' conv_in / conv_out / ResnetBlock2D
// convolutions (diffusers/models/resnet.py, autoencoders/vae.py).
#pragma once

#include <vector>

#include "nn/module.h"

namespace mobius {

struct Conv2dOptions {
  int64_t in_channels;
  int64_t out_channels;
  int64_t kernel_size;
  int64_t stride = 1;
  int64_t padding = 0;  // on every side
  // [top, left, bottom, right] instead of `padding` when not symmetric (Downsample2D's
  // F.pad(x, (0, 1, 0, 1)) before an unpadded convolution: {0, 0, 1, 1})
  std::vector<int64_t> pads = {};
  bool bias = true;
  int64_t groups = 1;  // in_channels and out_channels multiples of it (depthwise: groups = in_channels)
  DataType dtype = DataType::FLOAT;
};

class Conv2d : public Module {
 public:
  explicit Conv2d(const Conv2dOptions& o);
  // x [batch, in_channels, h, w] -> [batch, out_channels, (h + pad_h - kernel) / stride + 1, ...]
  // in x's dtype.
  Value* forward(Ops& op, Value* x) const;

  Parameter* weight;
  Parameter* bias = nullptr;

 private:
  Conv2dOptions o_;
};

}  // namespace mobius
