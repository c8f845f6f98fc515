#include "blocks/transformer2d.h"

namespace mobius {

Transformer2D::Transformer2D(const Transformer2DOptions& o) : o_(o) {
  norm = child<GroupNorm>("norm", GroupNormOptions{o.groups, o.channels, 1e-6f, o.dtype});
  const Conv2dOptions conv{.in_channels = o.channels, .out_channels = o.channels, .kernel_size = 1, .dtype = o.dtype};
  const LinearOptions linear{o.channels, o.channels, true, o.dtype};
  if (o.use_linear_projection) proj_in_linear = child<Linear>("proj_in", linear);
  else proj_in_conv = child<Conv2d>("proj_in", conv);
  for (int64_t k = 0; k < o.num_layers; ++k)
    blocks.push_back(child<BasicTransformerBlock>(
        "transformer_blocks." + std::to_string(k),
        BasicTransformerBlockOptions{.dim = o.channels, .heads = o.heads, .dim_head = o.channels / o.heads,
                                     .cross_attention_dim = o.cross_attention_dim, .norm_eps = o.norm_eps,
                                     .dtype = o.dtype}));
  if (o.use_linear_projection) proj_out_linear = child<Linear>("proj_out", linear);
  else proj_out_conv = child<Conv2d>("proj_out", conv);
}

Value* Transformer2D::forward(Ops& op, Value* x, Value* encoder_hidden_states) const {
  auto s = enter(op);
  Value* h = norm->forward(op, x);
  if (proj_in_conv) h = proj_in_conv->forward(op, h);
  h = op.Transpose(op.Reshape(h, {0, o_.channels, -1}), {.perm = {0, 2, 1}});  // [batch, h * w, inner]
  if (proj_in_linear) h = proj_in_linear->forward(op, h);
  for (const BasicTransformerBlock* b : blocks) h = b->forward(op, h, {.encoder_hidden_states = encoder_hidden_states});
  if (proj_out_linear) h = proj_out_linear->forward(op, h);
  h = op.Reshape(op.Transpose(h, {.perm = {0, 2, 1}}), op.Shape(x));
  if (proj_out_conv) h = proj_out_conv->forward(op, h);
  return op.Add(h, x);
}

}  // namespace mobius
