#include "blocks/basic_transformer_block.h"

#include <cmath>

namespace mobius {

DiffusersAttention::DiffusersAttention(int64_t dim, int64_t kv_dim, int64_t heads, int64_t dim_head, DataType dtype)
    : heads_(heads), dim_head_(dim_head) {
  const int64_t inner = heads * dim_head;
  to_q = child<Linear>("to_q", LinearOptions{dim, inner, false, dtype});
  to_k = child<Linear>("to_k", LinearOptions{kv_dim, inner, false, dtype});
  to_v = child<Linear>("to_v", LinearOptions{kv_dim, inner, false, dtype});
  to_out = child<Linear>("to_out.0", LinearOptions{inner, dim, true, dtype});
}

Value* DiffusersAttention::forward(Ops& op, Value* x, Value* context) const {
  auto s = enter(op);
  auto split = [&](Value* v) {  // [batch, seq, heads * dim_head] -> [batch, heads, seq, dim_head]
    return op.Transpose(op.Reshape(v, {0, 0, heads_, dim_head_}), {.perm = {0, 2, 1, 3}});
  };
  Value* y = op.Attention(split(to_q->forward(op, x)), split(to_k->forward(op, context)),
                          split(to_v->forward(op, context)), nullptr, nullptr, nullptr,
                          {.scale = 1.0f / std::sqrt(static_cast<float>(dim_head_))})
                 .y;
  op.builder().producer(y).tags = {.num_heads = heads_, .kv_num_heads = heads_, .head_size = dim_head_};
  return to_out->forward(op, op.Reshape(op.Transpose(y, {.perm = {0, 2, 1, 3}}), {0, 0, heads_ * dim_head_}));
}

BasicTransformerBlock::BasicTransformerBlock(const BasicTransformerBlockOptions& o) : inner_(4 * o.dim) {
  const NormOptions norm{.dim = o.dim, .eps = o.norm_eps, .dtype = o.dtype, .kind = NormKind::LayerNorm};
  norm1 = child<LayerNorm>("norm1", norm);
  attn1 = child<DiffusersAttention>("attn1", o.dim, o.dim, o.heads, o.dim_head, o.dtype);
  norm2 = child<LayerNorm>("norm2", norm);
  attn2 = child<DiffusersAttention>("attn2", o.dim, o.cross_attention_dim, o.heads, o.dim_head, o.dtype);
  norm3 = child<LayerNorm>("norm3", norm);
  ff_proj = child<Linear>("ff.net.0.proj", LinearOptions{o.dim, 2 * inner_, true, o.dtype});
  ff_out = child<Linear>("ff.net.2", LinearOptions{inner_, o.dim, true, o.dtype});
}

Value* BasicTransformerBlock::forward(Ops& op, Value* x, Value* encoder_hidden_states) const {
  auto s = enter(op);
  Value* n = norm1->forward(op, x);
  x = op.Add(attn1->forward(op, n, n), x);
  x = op.Add(attn2->forward(op, norm2->forward(op, x), encoder_hidden_states), x);
  std::vector<Value*> parts = op.Split(ff_proj->forward(op, norm3->forward(op, x)), {inner_, inner_}, {.axis = -1});
  return op.Add(ff_out->forward(op, op.Mul(parts[0], op.Gelu(parts[1]))), x);
}

}  // namespace mobius
