#include "blocks/patch_embed.h"

#include <cmath>

namespace mobius {

PatchEmbed::PatchEmbed(const PatchEmbedOptions& o) : o_(o) {
  proj = child<Conv2d>("proj", Conv2dOptions{.in_channels = o.in_channels, .out_channels = o.dim,
                                             .kernel_size = o.patch_size, .stride = o.patch_size, .dtype = o.dtype});
}

PatchEmbedOutput PatchEmbed::forward(Ops& op, Value* latent) const {
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  Value* patches = proj->forward(op, latent);  // [batch, dim, h, w]
  Value* grid = op.Shape(patches, {.start = 2});
  Value* tokens = op.Transpose(op.Reshape(patches, {0, o_.dim, -1}), {.perm = {0, 2, 1}});
  if (!o_.interpolation_scale) return {tokens, grid};
  const int64_t quarter = o_.dim / 4;
  std::vector<float> omega(quarter);
  for (int64_t k = 0; k < quarter; ++k)
    omega[k] = static_cast<float>(1.0 / std::pow(10000.0, static_cast<double>(k) / static_cast<double>(quarter)));
  Value* omegas = b.constant_f32(omega, {1, quarter});
  // one axis of n patches: [n, dim / 2] = [sin(g omega), cos(g omega)], g = arange(n) / (n / base) / scale
  auto axis_table = [&](Value* n) {  // n: int64 [1]
    Value* steps = op.Cast(op.Range(b.scalar_i64(0), op.Squeeze(n, {0}), b.scalar_i64(1)), {DataType::FLOAT});
    Value* cells = op.Div(op.Cast(n, {DataType::FLOAT}), static_cast<double>(o_.base_size));
    Value* g = op.Div(op.Div(steps, cells), *o_.interpolation_scale);
    Value* angles = op.Mul(op.Unsqueeze(g, {1}), omegas);
    return op.Concat({op.Sin(angles), op.Cos(angles)}, {.axis = 1});
  };
  Value* h = op.Slice(grid, {0}, {1}, {0});
  Value* w = op.Slice(grid, {1}, {2}, {0});
  Value* half = b.ints({o_.dim / 2});
  Value* shape = op.Concat({h, w, half}, {.axis = 0});
  Value* columns = op.Expand(op.Unsqueeze(axis_table(w), {0}), shape);  // [h, w, dim / 2]
  Value* rows = op.Expand(op.Unsqueeze(axis_table(h), {1}), shape);
  Value* pos = op.Reshape(op.Concat({columns, rows}, {.axis = 2}), {1, -1, o_.dim});
  if (o_.dtype != DataType::FLOAT) pos = op.Cast(pos, {o_.dtype});
  return {op.Add(tokens, pos), grid};
}

Value* unpatchify(Ops& op, Value* x, Value* grid, int64_t patch_size, int64_t channels) {
  GraphBuilder& b = op.builder();
  Value* batch = op.Shape(x, {.end = 1});
  const int64_t p = patch_size;
  // [batch, h, w, p, p, c] -> [batch, c, h, p, w, p] -> [batch, c, h * p, w * p]
  x = op.Reshape(x, op.Concat({batch, grid, b.ints({p, p, channels})}, {.axis = 0}));
  x = op.Transpose(x, {.perm = {0, 5, 1, 3, 2, 4}});
  return op.Reshape(x, op.Concat({batch, b.ints({channels}), op.Mul(grid, b.ints({p, p}))}, {.axis = 0}));
}

}  // namespace mobius
