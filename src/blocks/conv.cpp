#include "blocks/conv.h"

namespace mobius {

Conv1d::Conv1d(const Conv1dOptions& o) : o_(o) {
  weight = param("weight", {o.out_channels, o.in_channels / o.groups, o.kernel_size}, o.dtype);
  if (o.bias) bias = param("bias", {o.out_channels}, o.dtype);
}

Value* Conv1d::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return op.Conv(x, weight->value(op), bias ? bias->value(op) : nullptr,
                 {.strides = {o_.stride}, .pads = {o_.padding, o_.padding}, .group = o_.groups});
}

}  // namespace mobius
