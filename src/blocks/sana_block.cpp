#include "blocks/sana_block.h"

#include "blocks/activation.h"

namespace mobius {

SanaLinearAttention::SanaLinearAttention(int64_t dim, int64_t heads, int64_t head_dim, bool bias, DataType dtype)
    : heads_(heads), head_dim_(head_dim), dtype_(dtype) {
  const int64_t inner = heads * head_dim;
  to_q = child<Linear>("to_q", LinearOptions{dim, inner, bias, dtype});
  to_k = child<Linear>("to_k", LinearOptions{dim, inner, bias, dtype});
  to_v = child<Linear>("to_v", LinearOptions{dim, inner, bias, dtype});
  to_out = child<Linear>("to_out.0", LinearOptions{inner, dim, true, dtype});
}

Value* SanaLinearAttention::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  const bool upcast = dtype_ != DataType::FLOAT;
  // [batch, seq, heads * head_dim] -> [batch, heads, seq, head_dim] in float32
  auto heads = [&](Value* v) {
    v = op.Transpose(op.Reshape(v, {0, 0, heads_, head_dim_}), {.perm = {0, 2, 1, 3}});
    return upcast ? op.Cast(v, {DataType::FLOAT}) : v;
  };
  Value* q = heads(op.Relu(to_q->forward(op, x)));
  Value* k = heads(op.Relu(to_k->forward(op, x)));
  Value* v = heads(to_v->forward(op, x));
  Value* qt = op.Transpose(q, {.perm = {0, 1, 3, 2}});                            // [b, h, d, n]
  Value* kv = op.MatMul(op.Transpose(v, {.perm = {0, 1, 3, 2}}), k);               // [b, h, d, d]
  Value* num = op.MatMul(kv, qt);                                                 // [b, h, d, n]
  Value* den = op.MatMul(op.ReduceSum(k, {2}), qt);                               // [b, h, 1, n]
  Value* y = op.Div(num, op.Add(den, 1e-15));
  y = op.Transpose(y, {.perm = {0, 3, 1, 2}});  // [b, n, h, d]
  y = op.Reshape(y, {0, 0, heads_ * head_dim_});
  if (upcast) y = op.Cast(y, {dtype_});
  return to_out->forward(op, y);
}

GLUMBConv::GLUMBConv(int64_t dim, int64_t hidden, DataType dtype) : hidden_(hidden) {
  conv_inverted = child<Conv2d>("conv_inverted", Conv2dOptions{.in_channels = dim, .out_channels = 2 * hidden,
                                                               .kernel_size = 1, .dtype = dtype});
  conv_depth = child<Conv2d>("conv_depth", Conv2dOptions{.in_channels = 2 * hidden, .out_channels = 2 * hidden,
                                                         .kernel_size = 3, .padding = 1, .groups = 2 * hidden,
                                                         .dtype = dtype});
  conv_point = child<Conv2d>("conv_point", Conv2dOptions{.in_channels = hidden, .out_channels = dim, .kernel_size = 1,
                                                         .bias = false, .dtype = dtype});
}

Value* GLUMBConv::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  x = conv_depth->forward(op, activation(op, "silu", conv_inverted->forward(op, x)));
  std::vector<Value*> parts = op.Split(x, {hidden_, hidden_}, {.axis = 1});
  return conv_point->forward(op, op.Mul(parts[0], activation(op, "silu", parts[1])));
}

SanaTransformerBlock::SanaTransformerBlock(const SanaTransformerBlockOptions& o) : o_(o) {
  norm1 = child<LayerNorm>("norm1", NormOptions{.dim = o.dim, .eps = o.norm_eps, .dtype = o.dtype,
                                                .kind = NormKind::LayerNorm, .elementwise_affine = false});
  attn1 = child<SanaLinearAttention>("attn1", o.dim, o.heads, o.head_dim, o.attention_bias, o.dtype);
  norm2 = child<LayerNorm>("norm2", NormOptions{.dim = o.dim, .eps = o.norm_eps, .dtype = o.dtype,
                                                .kind = NormKind::LayerNorm,
                                                .elementwise_affine = o.norm_elementwise_affine});
  attn2 = child<DiffusersAttention>("attn2", o.dim, o.cross_attention_dim, o.cross_heads, o.cross_head_dim, true, o.dtype);
  ff = child<GLUMBConv>("ff", o.dim, o.ff_hidden, o.dtype);
  scale_shift_table = param("scale_shift_table", {6, o.dim}, o.dtype);
}

Value* SanaTransformerBlock::forward(Ops& op, Value* x, Value* states, Value* bias, Value* timestep, Value* grid) const {
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  Value* table = op.Add(op.Unsqueeze(scale_shift_table->value(op), {0}), op.Reshape(timestep, {0, 6, o_.dim}));
  std::vector<Value*> e = op.Split(table, std::vector<int64_t>(6, 1), {.axis = 1});  // each [batch, 1, dim]
  Value* n = op.Add(op.Mul(norm1->forward(op, x), op.Add(e[1], 1.0)), e[0]);
  x = op.Add(x, op.Mul(e[2], attn1->forward(op, n)));
  x = op.Add(attn2->forward(op, x, states, bias), x);
  n = op.Add(op.Mul(norm2->forward(op, x), op.Add(e[4], 1.0)), e[3]);
  // tokens -> [batch, dim, h, w] -> GLUMBConv -> tokens
  Value* batch = op.Shape(x, {.end = 1});
  n = op.Transpose(op.Reshape(n, op.Concat({batch, grid, b.ints({o_.dim})}, {.axis = 0})), {.perm = {0, 3, 1, 2}});
  Value* f = op.Transpose(op.Reshape(ff->forward(op, n), {0, o_.dim, -1}), {.perm = {0, 2, 1}});
  return op.Add(x, op.Mul(e[5], f));
}

}  // namespace mobius
