#include "blocks/spatial_attention.h"

#include <cmath>

namespace mobius {

SpatialAttention::SpatialAttention(const SpatialAttentionOptions& o) : o_(o) {
  group_norm = child<GroupNorm>("group_norm", GroupNormOptions{o.groups, o.channels, o.eps, o.dtype});
  const LinearOptions linear{o.channels, o.channels, true, o.dtype};
  to_q = child<Linear>("to_q", linear);
  to_k = child<Linear>("to_k", linear);
  to_v = child<Linear>("to_v", linear);
  to_out = child<Linear>("to_out.0", linear);
}

Value* SpatialAttention::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  const int64_t dim_head = o_.channels / o_.heads;
  // [batch, channels, h, w] -> [batch, h * w, channels]
  Value* t = op.Transpose(op.Reshape(group_norm->forward(op, x), {0, o_.channels, -1}), {.perm = {0, 2, 1}});
  auto heads = [&](Value* v) {  // [batch, seq, channels] -> [batch, heads, seq, dim_head]
    return op.Transpose(op.Reshape(v, {0, 0, o_.heads, dim_head}), {.perm = {0, 2, 1, 3}});
  };
  Value* y = op.Attention(heads(to_q->forward(op, t)), heads(to_k->forward(op, t)), heads(to_v->forward(op, t)),
                          nullptr, nullptr, nullptr, {.scale = 1.0f / std::sqrt(static_cast<float>(dim_head))})
                 .y;
  op.builder().producer(y).tags = {.num_heads = o_.heads, .kv_num_heads = o_.heads, .head_size = dim_head};
  y = to_out->forward(op, op.Reshape(op.Transpose(y, {.perm = {0, 2, 1, 3}}), {0, 0, o_.channels}));
  // [batch, h * w, channels] -> [batch, channels, h, w]
  y = op.Reshape(op.Transpose(y, {.perm = {0, 2, 1}}), op.Shape(x));
  Value* out = op.Add(y, x);
  return o_.rescale_output_factor == 1.0f ? out : op.Div(out, o_.rescale_output_factor);
}

}  // namespace mobius
