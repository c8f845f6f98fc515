#include "blocks/norms.h"

namespace mobius {

RMSNorm::RMSNorm(const NormOptions& o) : o_(o) { weight = param("weight", {o.dim}, o.dtype); }

Value* RMSNorm::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* scale = weight->value(op);
  if (o_.weight_offset_one) scale = op.Add(scale, 1.0);
  return op.RMSNormalization(x, scale, {.axis = -1, .epsilon = o_.eps});
}

LayerNorm::LayerNorm(const NormOptions& o) : o_(o) {
  weight = param("weight", {o.dim}, o.dtype);
  if (o.bias) bias = param("bias", {o.dim}, o.dtype);
}

Value* LayerNorm::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return op.LayerNormalization(x, weight->value(op), bias ? bias->value(op) : nullptr,
                               {.axis = -1, .epsilon = o_.eps});
}

std::unique_ptr<Norm> make_norm(const NormOptions& o) {
  if (o.kind == NormKind::LayerNorm) return std::make_unique<LayerNorm>(o);
  return std::make_unique<RMSNorm>(o);
}

}  // namespace mobius
