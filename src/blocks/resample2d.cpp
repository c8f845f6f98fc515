#include "blocks/resample2d.h"

namespace mobius {

Downsample2D::Downsample2D(const Resample2DOptions& o) {
  Conv2dOptions c{.in_channels = o.channels, .out_channels = o.out_channels, .kernel_size = 3, .stride = 2,
                  .padding = o.padding, .dtype = o.dtype};
  if (o.padding == 0) c.pads = {0, 0, 1, 1};
  conv = child<Conv2d>("conv", c);
}

Value* Downsample2D::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return conv->forward(op, x);
}

Upsample2D::Upsample2D(const Resample2DOptions& o) {
  conv = child<Conv2d>("conv", Conv2dOptions{.in_channels = o.channels, .out_channels = o.out_channels,
                                             .kernel_size = 3, .padding = 1, .dtype = o.dtype});
}

Value* Upsample2D::forward(Ops& op, Value* x, Value* size_like) const {
  auto s = enter(op);
  Value* leading = op.Shape(x, {.end = 2});
  Value* spatial = size_like ? op.Shape(size_like, {.start = 2}) : op.Mul(op.Shape(x, {.start = 2}), op.builder().ints({2, 2}));
  return conv->forward(op, op.Resize(x, op.Concat({leading, spatial}, {.axis = 0})));
}

}  // namespace mobius
