#include "blocks/conv2d.h"

namespace mobius {

Conv2d::Conv2d(const Conv2dOptions& o) : o_(o) {
  weight = param("weight", {o.out_channels, o.in_channels / o.groups, o.kernel_size, o.kernel_size}, o.dtype);
  if (o.bias) bias = param("bias", {o.out_channels}, o.dtype);
}

Value* Conv2d::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  const std::vector<int64_t> pads = o_.pads.empty() ? std::vector<int64_t>(4, o_.padding) : o_.pads;
  return op.Conv(x, weight->value(op), bias ? bias->value(op) : nullptr,
                 {.strides = {o_.stride, o_.stride}, .pads = pads, .group = o_.groups});
}

}  // namespace mobius
