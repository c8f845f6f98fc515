#include "blocks/resnet_block2d.h"

#include "blocks/activation.h"

namespace mobius {

ResnetBlock2D::ResnetBlock2D(const ResnetBlock2DOptions& o) : o_(o) {
  norm1 = child<GroupNorm>("norm1", GroupNormOptions{o.groups, o.in_channels, o.eps, o.dtype});
  conv1 = child<Conv2d>("conv1", Conv2dOptions{.in_channels = o.in_channels, .out_channels = o.out_channels,
                                               .kernel_size = 3, .padding = 1, .dtype = o.dtype});
  if (o.temb_channels > 0)
    time_emb_proj = child<Linear>("time_emb_proj", LinearOptions{o.temb_channels, o.out_channels, true, o.dtype});
  norm2 = child<GroupNorm>("norm2", GroupNormOptions{o.groups, o.out_channels, o.eps, o.dtype});
  conv2 = child<Conv2d>("conv2", Conv2dOptions{.in_channels = o.out_channels, .out_channels = o.out_channels,
                                               .kernel_size = 3, .padding = 1, .dtype = o.dtype});
  if (o.in_channels != o.out_channels)
    conv_shortcut = child<Conv2d>("conv_shortcut", Conv2dOptions{.in_channels = o.in_channels,
                                                                 .out_channels = o.out_channels,
                                                                 .kernel_size = 1, .dtype = o.dtype});
}

Value* ResnetBlock2D::forward(Ops& op, Value* x, Value* temb) const {
  auto s = enter(op);
  Value* h = conv1->forward(op, activation(op, o_.act, norm1->forward(op, x)));
  if (time_emb_proj && temb)
    h = op.Add(h, op.Unsqueeze(time_emb_proj->forward(op, activation(op, o_.act, temb)), {2, 3}));
  h = conv2->forward(op, activation(op, o_.act, norm2->forward(op, h)));
  Value* shortcut = conv_shortcut ? conv_shortcut->forward(op, x) : x;
  Value* out = op.Add(shortcut, h);
  return o_.output_scale_factor == 1.0f ? out : op.Div(out, o_.output_scale_factor);
}

}  // namespace mobius
