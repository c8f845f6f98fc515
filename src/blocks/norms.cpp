#include "blocks/norms.h"

namespace mobius {

RMSNorm::RMSNorm(const NormOptions& o) : o_(o) { weight = param("weight", {o.dim}, o.dtype); }

Value* RMSNorm::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* scale = weight->value(op);
  if (!o_.weight_offset_one) return op.RMSNormalization(x, scale, {.axis = -1, .epsilon = o_.eps});
  // GemmaRMSNorm: norm(x.float()) * (1.0 + weight.float()), then back to x's dtype.
  const DataType dtype = x->dtype;
  if (dtype != DataType::FLOAT) {
    x = op.Cast(x, {.to = DataType::FLOAT});
    scale = op.Cast(scale, {.to = DataType::FLOAT});
  }
  Value* y = op.RMSNormalization(x, op.Add(scale, 1.0), {.axis = -1, .epsilon = o_.eps});
  return dtype == DataType::FLOAT ? y : op.Cast(y, {.to = dtype});
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
