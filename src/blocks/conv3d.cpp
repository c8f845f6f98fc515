#include "blocks/conv3d.h"

namespace mobius {

Conv3d::Conv3d(const Conv3dOptions& o) : o_(o) {
  weight = param("weight", {o.out_channels, o.in_channels, o.kernel[0], o.kernel[1], o.kernel[2]}, o.dtype);
  if (o.bias) bias = param("bias", {o.out_channels}, o.dtype);
}

Value* Conv3d::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return op.Conv(x, weight->value(op), bias ? bias->value(op) : nullptr,
                 {.strides = {o_.stride.begin(), o_.stride.end()}, .pads = {o_.pads.begin(), o_.pads.end()}});
}

}  // namespace mobius
