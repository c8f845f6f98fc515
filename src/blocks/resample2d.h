// diffusers' 2-D resampling layers with a convolution (use_conv=True), the state-dict child "conv":
//   Downsample2D (diffusers/models/downsampling.py): a 3x3 convolution of stride 2, with padding on
//     every side, or padding 0: x zero-padded by one row at the bottom and one column at the right
//     first (F.pad(x, (0, 1, 0, 1)): the VAE encoder's downsample_padding=0).
//   Upsample2D (diffusers/models/upsampling.py): F.interpolate(x, mode="nearest") to twice the size
//     or to `output_size` (UNet2DConditionModel's up blocks pass the skip connection's size), then a
//     3x3 convolution of padding 1.
#pragma once

#include "blocks/conv2d.h"

namespace mobius {

struct Resample2DOptions {
  int64_t channels;
  int64_t out_channels;
  int64_t padding = 1;  // Downsample2D only
  DataType dtype = DataType::FLOAT;
};

class Downsample2D : public Module {
 public:
  explicit Downsample2D(const Resample2DOptions& o);
  // x [batch, channels, h, w] -> [batch, out_channels, (h + 2 * padding - 3) / 2 + 1, ...]
  // (padding 0: (h - 2) / 2 + 1).
  Value* forward(Ops& op, Value* x) const;
  Conv2d* conv;
};

class Upsample2D : public Module {
 public:
  explicit Upsample2D(const Resample2DOptions& o);
  // x [batch, channels, h, w] -> [batch, out_channels, 2h, 2w], or the spatial size of `size_like`
  // ([.., .., H, W]) when given.
  Value* forward(Ops& op, Value* x, Value* size_like = nullptr) const;
  Conv2d* conv;
};

}  // namespace mobius
