#include "blocks/pos_conv_embedding.h"

#include "blocks/activation.h"

namespace mobius {

namespace {
// Wav2Vec2SamePadLayer: drops the last frame of [batch, channels, frames] for an even kernel.
Value* same_pad(Ops& op, Value* h, int64_t kernel) { return kernel % 2 == 0 ? op.Slice(h, {0}, {-1}, {2}) : h; }
}  // namespace

WeightNormConvEmbedding::WeightNormConvEmbedding(const PosConvEmbeddingOptions& o) : o_(o) {
  weight_g = param("conv.parametrizations.weight.original0", {1, 1, o.kernel_size}, o.dtype);
  weight_v = param("conv.parametrizations.weight.original1", {o.hidden_size, o.hidden_size / o.groups, o.kernel_size},
                   o.dtype);
  bias = param("conv.bias", {o.hidden_size}, o.dtype);
}

Value* WeightNormConvEmbedding::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  const int64_t k = o_.kernel_size;
  Value* v = weight_v->value(op);
  // torch._weight_norm(v, g, 2) = v * (g / norm_except_dim(v, 2, 2))
  Value* norm = op.Sqrt(op.ReduceSum(op.Mul(v, v), {0, 1}));  // [1, 1, kernel]
  Value* w = op.Mul(v, op.Div(weight_g->value(op), norm));
  Value* h = op.Conv(op.Transpose(x, {.perm = {0, 2, 1}}), w, bias->value(op),
                     {.strides = {o_.stride}, .pads = {k / 2, k / 2}, .group = o_.groups});
  return op.Transpose(activation(op, o_.activation, same_pad(op, h, k)), {.perm = {0, 2, 1}});
}

StackedConvEmbedding::StackedConvEmbedding(const PosConvEmbeddingOptions& o, int64_t num_layers) : o_(o) {
  for (int64_t i = 0; i < num_layers; ++i)
    convs.push_back(child<Conv1d>("layers." + std::to_string(i) + ".conv",
                                  Conv1dOptions{.in_channels = o.hidden_size,
                                                .out_channels = o.hidden_size,
                                                .kernel_size = o.kernel_size,
                                                .padding = o.kernel_size / 2,
                                                .groups = o.groups,
                                                .dtype = o.dtype}));
  // no parameters: one module serves every layer
  norm = child<LayerNorm>("layer_norm", NormOptions{.dim = o.hidden_size, .eps = 1e-5f, .dtype = o.dtype,
                                                    .kind = NormKind::LayerNorm, .elementwise_affine = false});
}

Value* StackedConvEmbedding::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* h = x;  // [batch, frames, hidden]
  for (const Conv1d* conv : convs) {
    Value* c = same_pad(op, conv->forward(op, op.Transpose(h, {.perm = {0, 2, 1}})), o_.kernel_size);
    Value* hw = op.Transpose(c, {.perm = {0, 2, 1}});
    h = activation(op, o_.activation, norm->forward(op, hw));
  }
  return h;
}

}  // namespace mobius
