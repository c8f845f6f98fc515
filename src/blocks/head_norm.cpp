#include "blocks/head_norm.h"

namespace mobius {

PerHeadLayerNorm::PerHeadLayerNorm(const HeadNormOptions& o) : o_(o) {
  if (!o.norm_per_head) {
    weight = param("weight", {o.num_heads, o.head_dim}, o.dtype);
    if (o.bias) bias = param("bias", {o.num_heads, o.head_dim}, o.dtype);
    return;
  }
  NormOptions n{.dim = o.head_dim, .eps = o.eps, .dtype = o.dtype, .bias = o.bias,
                .kind = NormKind::LayerNorm};
  for (int64_t h = 0; h < o.num_heads; ++h)
    norms.push_back(child<LayerNorm>("norms." + std::to_string(h), n));
}

Value* PerHeadLayerNorm::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  // [num_heads, head_dim] from the per-head [head_dim] parameters
  auto stack = [&](Parameter* LayerNorm::*member) {
    std::vector<Value*> rows;
    for (const LayerNorm* n : norms) rows.push_back(op.Unsqueeze((n->*member)->value(op), {0}));
    return op.Concat(rows, {.axis = 0});
  };
  Value* w = weight ? weight->value(op) : stack(&LayerNorm::weight);
  Value* b = bias ? bias->value(op) : (o_.bias && !norms.empty() ? stack(&LayerNorm::bias) : nullptr);
  Value* ones = op.builder().constant_float(std::vector<float>(o_.head_dim, 1.0f), {o_.head_dim}, x->dtype);
  Value* y = op.Mul(op.LayerNormalization(x, ones, nullptr, {.axis = -1, .epsilon = o_.eps}), w);
  return b ? op.Add(y, b) : y;
}

}  // namespace mobius
