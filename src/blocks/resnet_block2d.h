// diffusers' ResnetBlock2D (diffusers/models/resnet.py), pre-norm, no up/down sampling inside:
//   h = conv1(act(norm1(x)))
//   with a time embedding: h = h + time_emb_proj(act(temb))[:, :, None, None]
//   h = conv2(act(norm2(h)))            (dropout is the identity at inference)
//   out = (shortcut(x) + h) / output_scale_factor
// shortcut: conv_shortcut, a 1x1 Conv2d, when in_channels != out_channels (use_in_shortcut), else x.
// Children norm1, conv1 (3x3), time_emb_proj (Linear temb_channels -> out_channels), norm2, conv2
// (3x3), conv_shortcut: the diffusers state-dict names.
#pragma once

#include <string>

#include "blocks/conv2d.h"
#include "blocks/group_norm.h"
#include "blocks/linear.h"

namespace mobius {

struct ResnetBlock2DOptions {
  int64_t in_channels;
  int64_t out_channels;
  int64_t temb_channels = 0;  // 0: no time embedding (the VAE's blocks: temb_channels None)
  int64_t groups = 32;        // GroupNorm groups of norm1 and norm2 (groups_out = groups)
  float eps = 1e-6f;
  std::string act = "silu";   // non_linearity, a transformers activation name (swish = silu)
  float output_scale_factor = 1.0f;
  DataType dtype = DataType::FLOAT;
};

class ResnetBlock2D : public Module {
 public:
  explicit ResnetBlock2D(const ResnetBlock2DOptions& o);
  // x [batch, in_channels, h, w], temb [batch, temb_channels] or null -> [batch, out_channels, h, w].
  Value* forward(Ops& op, Value* x, Value* temb) const;

  GroupNorm *norm1, *norm2;
  Conv2d *conv1, *conv2;
  Linear* time_emb_proj = nullptr;
  Conv2d* conv_shortcut = nullptr;

 private:
  ResnetBlock2DOptions o_;
};

}  // namespace mobius
