#include "blocks/ada_layer_norm.h"

#include "blocks/activation.h"

namespace mobius {

AdaLayerNorm::AdaLayerNorm(const AdaLayerNormOptions& o) : o_(o) {
  linear = child<Linear>("linear", LinearOptions{o.conditioning_dim, o.chunks * o.dim, true, o.dtype});
  norm = child<LayerNorm>("norm", NormOptions{.dim = o.dim, .eps = o.eps, .dtype = o.dtype,
                                              .kind = NormKind::LayerNorm, .elementwise_affine = false});
}

std::vector<Value*> AdaLayerNorm::chunks(Ops& op, Value* temb) const {
  auto s = enter(op);
  Value* emb = op.Unsqueeze(linear->forward(op, activation(op, "silu", temb)), {1});
  return op.Split(emb, std::vector<int64_t>(o_.chunks, o_.dim), {.axis = -1});
}

Value* AdaLayerNorm::modulate(Ops& op, Value* x, Value* shift, Value* scale) const {
  auto s = enter(op);
  return op.Add(op.Mul(norm->forward(op, x), op.Add(scale, 1.0)), shift);
}

}  // namespace mobius
