#include "blocks/vision_grid.h"

#include <cmath>
#include <utility>

namespace mobius {

PatchGrid patch_grid(Ops& op, Value* grid_thw, int64_t merge) {
  GraphBuilder& b = op.builder();
  auto column = [&](int64_t k) { return op.Gather(grid_thw, b.scalar_i64(k), {.axis = 1}); };  // [n]
  auto mod = [&](Value* a, Value* d) { return op.Sub(a, op.Mul(op.Div(a, d), d)); };
  Value* hw = op.Mul(column(1), column(2));
  Value* sizes = op.Mul(column(0), hw);
  Value* ends = op.CumSum(sizes, b.scalar_i64(0));
  Value* idx = op.Range(b.scalar_i64(0), op.ReduceSum(sizes, {0}, {.keepdims = 0}), b.scalar_i64(1));
  // each patch's image: how many images end at or before it
  Value* image = op.ReduceSum(
      op.Cast(op.GreaterOrEqual(op.Unsqueeze(idx, {1}), op.Unsqueeze(ends, {0})), {.to = DataType::INT64}), {1},
      {.keepdims = 0});
  auto per_patch = [&](Value* per_image) { return op.Gather(per_image, image); };
  Value* local = op.Sub(idx, per_patch(op.Sub(ends, sizes)));
  Value* within = mod(local, per_patch(hw));  // index inside the frame
  PatchGrid g;
  g.frame_start = op.Sub(idx, within);
  g.height = per_patch(column(1));
  g.width = per_patch(column(2));
  Value* blocks_w = op.Div(g.width, static_cast<double>(merge));
  Value* block = op.Div(within, static_cast<double>(merge * merge));
  g.block_row = op.Div(block, blocks_w);
  g.block_col = mod(block, blocks_w);
  Value* in_block = mod(within, b.scalar_i64(merge * merge));
  g.row = op.Add(op.Mul(g.block_row, static_cast<double>(merge)), op.Div(in_block, static_cast<double>(merge)));
  g.col = op.Add(op.Mul(g.block_col, static_cast<double>(merge)), mod(in_block, b.scalar_i64(merge)));
  return g;
}

Value* frame_mask(Ops& op, Value* frame_start, Value* row, Value* col, DataType dtype) {
  auto same = [&](Value* v) { return op.Equal(op.Unsqueeze(v, {1}), op.Unsqueeze(v, {0})); };
  Value* allowed = same(frame_start);
  if (row) allowed = op.And(allowed, op.And(same(row), same(col)));
  return additive_mask(op, op.Unsqueeze(allowed, {0, 1}), dtype);
}

RopeTables axial_rope(Ops& op, Value* row, Value* col, int64_t head_dim, double theta, DataType dtype) {
  auto s = op.builder().scope("rotary_pos_emb");
  const int64_t spatial = head_dim / 2;
  std::vector<float> inv;
  for (int64_t i = 0; i < spatial; i += 2)
    inv.push_back(static_cast<float>(1.0 / std::pow(theta, static_cast<double>(i) / static_cast<double>(spatial))));
  Value* inv_freq = op.builder().constant_f32(inv, {static_cast<int64_t>(inv.size())});
  auto angles = [&](Value* p) { return op.Mul(op.Unsqueeze(op.Cast(p, {.to = DataType::FLOAT}), {1}), inv_freq); };
  Value* freqs = op.Unsqueeze(op.Concat({angles(row), angles(col)}, {.axis = 1}), {0});
  Value* cos = op.Cos(freqs);
  Value* sin = op.Sin(freqs);
  if (dtype != DataType::FLOAT) {
    cos = op.Cast(cos, {.to = dtype});
    sin = op.Cast(sin, {.to = dtype});
  }
  return {cos, sin, 0};
}

Value* resample_positions(Ops& op, Value* table, int64_t side, const PatchGrid& grid, bool align_corners,
                          DataType dtype) {
  auto s = op.builder().scope("pos_embed");
  // per axis: the two taps (clamped to the table) and their weights max(1 - |src - tap|, 0), with
  // src = index * (side - 1) / max(size - 1, 1) (align_corners) or (index + 0.5) * side / size - 0.5
  auto taps = [&](Value* pos, Value* size) {
    Value* index = op.Cast(pos, {.to = DataType::FLOAT});
    Value* src;
    if (align_corners) {
      Value* scale = op.Cast(op.Max(op.Sub(size, 1.0), 1.0), {.to = DataType::FLOAT});
      src = op.Div(op.Mul(index, static_cast<double>(side - 1)), scale);
    } else {
      src = op.Sub(op.Div(op.Mul(op.Add(index, 0.5), static_cast<double>(side)), op.Cast(size, {.to = DataType::FLOAT})),
                   0.5);
    }
    Value* floor = op.Floor(src);
    std::vector<std::pair<Value*, Value*>> out;
    for (double offset : {0.0, 1.0}) {
      Value* tap = op.Cast(op.Min(op.Max(op.Add(floor, offset), 0.0), static_cast<double>(side - 1)),
                           {.to = DataType::INT64});
      Value* weight = op.Max(op.Sub(1.0, op.Abs(op.Sub(op.Sub(src, floor), offset))), 0.0);
      out.emplace_back(tap, weight);
    }
    return out;
  };
  Value* sum = nullptr;
  for (const auto& [th, wh] : taps(grid.row, grid.height))
    for (const auto& [tw, ww] : taps(grid.col, grid.width)) {
      Value* rows = op.Gather(table, op.Add(op.Mul(th, static_cast<double>(side)), tw));
      Value* weight = op.Unsqueeze(op.Mul(wh, ww), {1});
      if (dtype != DataType::FLOAT) weight = op.Cast(weight, {.to = dtype});
      Value* term = op.Mul(rows, weight);
      sum = sum ? op.Add(sum, term) : term;
    }
  return sum;
}

}  // namespace mobius
