#include "blocks/group_norm.h"

namespace mobius {

GroupNorm::GroupNorm(const GroupNormOptions& o) : o_(o) {
  weight = param("weight", {o.num_channels}, o.dtype);
  bias = param("bias", {o.num_channels}, o.dtype);
}

Value* GroupNorm::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  const std::vector<float> ones(o_.num_groups, 1.0f), zeros(o_.num_groups, 0.0f);
  Value* groups = op.Reshape(x, {0, o_.num_groups, -1});
  Value* normed = op.InstanceNormalization(groups, b.constant_float(ones, {o_.num_groups}, o_.dtype),
                                           b.constant_float(zeros, {o_.num_groups}, o_.dtype), {.epsilon = o_.eps});
  Value* y = op.Reshape(normed, op.Shape(x));
  const std::vector<int64_t> channel_axes = {1, 2};  // [C] -> [C, 1, 1] against [N, C, H, W]
  return op.Add(op.Mul(y, op.Unsqueeze(weight->value(op), channel_axes)), op.Unsqueeze(bias->value(op), channel_axes));
}

}  // namespace mobius
