// GroupNorm (torch.nn.GroupNorm, affine): x [batch, channels, height, width] split into num_groups groups
// of channels / num_groups channels, each normalized over its channels and positions together
// (biased variance, eps inside the square root), then * weight[c] + bias[c]. Checkpoint keys
// weight [channels], bias [channels]. Lowered as x reshaped to [batch, num_groups, -1],
// InstanceNormalization (scale 1, bias 0: each row's mean and variance), reshaped back, then the
// per-channel affine: onnxruntime runs InstanceNormalization natively on every provider (ONNX
// GroupNormalization-21 is a function op it expands into reductions). Computed in the model dtype.
// diffusers' ResnetBlock2D norm1 / norm2, the VAE's conv_norm_out, Attention.group_norm.
#pragma once

#include "nn/module.h"

namespace mobius {

struct GroupNormOptions {
  int64_t num_groups;
  int64_t num_channels;  // a multiple of num_groups (checked by the caller, which knows the field)
  float eps = 1e-5f;
  DataType dtype = DataType::FLOAT;
};

class GroupNorm : public Module {
 public:
  explicit GroupNorm(const GroupNormOptions& o);
  // x [batch, num_channels, height, width] -> same shape and dtype.
  Value* forward(Ops& op, Value* x) const;

  Parameter* weight;
  Parameter* bias;

 private:
  GroupNormOptions o_;
};

}  // namespace mobius
