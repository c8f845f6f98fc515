#include "blocks/norms.h"

#include "blocks/activation.h"
#include "blocks/linear.h"
#include "blocks/mamba.h"  // to_float

namespace mobius {
namespace {

// The scale input of the ONNX op: weight, (1 + weight), or ones without a weight.
Value* norm_scale(Ops& op, const Parameter* weight, const NormOptions& o) {
  if (!weight) return op.builder().constant_float(std::vector<float>(o.dim, 1.0f), {o.dim}, o.dtype);
  Value* w = weight->value(op);
  return o.weight_offset_one ? op.Add(w, 1.0) : w;
}

}  // namespace

RMSNorm::RMSNorm(const NormOptions& o) : o_(o) {
  if (o.elementwise_affine) weight = param("weight", {o.dim}, o.dtype);
}

Value* RMSNorm::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  if (!o_.weight_offset_one)
    return op.RMSNormalization(x, norm_scale(op, weight, o_), {.axis = -1, .epsilon = o_.eps});
  // GemmaRMSNorm: norm(x.float()) * (1.0 + weight.float()), then back to x's dtype.
  const DataType dtype = x->dtype;
  Value* scale = weight->value(op);
  if (dtype != DataType::FLOAT) {
    x = op.Cast(x, {.to = DataType::FLOAT});
    scale = op.Cast(scale, {.to = DataType::FLOAT});
  }
  Value* y = op.RMSNormalization(x, op.Add(scale, 1.0), {.axis = -1, .epsilon = o_.eps});
  return dtype == DataType::FLOAT ? y : op.Cast(y, {.to = dtype});
}

LayerNorm::LayerNorm(const NormOptions& o) : o_(o) {
  if (!o.elementwise_affine) return;
  weight = param("weight", {o.dim}, o.dtype);
  if (o.bias) bias = param("bias", {o.dim}, o.dtype);
}

Value* LayerNorm::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return op.LayerNormalization(x, norm_scale(op, weight, o_), bias ? bias->value(op) : nullptr,
                               {.axis = -1, .epsilon = o_.eps});
}

std::unique_ptr<Norm> make_norm(const NormOptions& o) {
  if (o.kind == NormKind::LayerNorm) return std::make_unique<LayerNorm>(o);
  return std::make_unique<RMSNorm>(o);
}

GatedNorm::GatedNorm(const NormOptions& o, int64_t rank) : dtype_(o.dtype) {
  norm = adopt("norm", make_norm(o));
  down_ = child<Linear>("W_down", LinearOptions{o.dim, rank, false, o.dtype});
  up_ = child<Linear>("W_up", LinearOptions{rank, o.dim, false, o.dtype});
}

Value* GatedNorm::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* y = norm->forward(op, x);
  Value* gate = op.Sigmoid(to_float(op, up_->forward(op, activation(op, "silu", down_->forward(op, y)))));
  return dtype_ != DataType::FLOAT ? op.Cast(op.Mul(to_float(op, y), gate), {.to = dtype_}) : op.Mul(y, gate);
}

}  // namespace mobius
