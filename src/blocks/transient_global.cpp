#include "blocks/transient_global.h"

namespace mobius {

GlobalBlocks fixed_global_blocks(Ops& op, Value* attention_mask, int64_t global_block_size) {
  auto sc = op.builder().scope("global_blocks");
  GraphBuilder& b = op.builder();
  const auto g = static_cast<double>(global_block_size);
  Value* seq = op.Squeeze(op.Shape(attention_mask, {.start = 1, .end = 2}), {0});
  // fixed_block_mask = cumsum(ones / g) - ones / g in float32, the running sum accumulated in
  // float64 as torch's CPU cumsum does (float32 steps of 1/3 would put position 9 in block 2)
  Value* step = op.Expand(b.constant_f32({1.0f / static_cast<float>(global_block_size)}, {}),
                          op.Shape(attention_mask));
  Value* running = op.CumSum(op.Cast(step, {.to = DataType::DOUBLE}), b.scalar_i64(1));
  Value* fixed = op.Sub(op.Cast(running, {.to = DataType::FLOAT}), step);
  Value* token = op.Equal(attention_mask, 0);
  Value* mask = op.Where(token, b.constant_f32({-1000.0f}, {}), b.constant_f32({1.0f}, {}));
  Value* ids = op.Cast(op.Floor(op.Sub(op.Add(mask, fixed), 1.0f)), {.to = DataType::INT64});
  ids = op.Max(ids, -1);
  ids = op.Add(op.Mul(ids, attention_mask), op.Sub(attention_mask, 1));  // padding -> -1
  // handle_orphan_tokens: ids capped at (number of full blocks whose last token is a token) - 1
  Value* pos = op.Range(b.scalar_i64(0), seq, b.scalar_i64(1));
  Value* block_end = op.Equal(op.Sub(pos, op.Mul(op.Div(pos, g), g)), g - 1);  // pos % g == g - 1
  Value* true_end = op.And(op.Unsqueeze(block_end, {0}), op.GreaterOrEqual(ids, 0));
  Value* full = op.Sub(op.ReduceSum(op.Cast(true_end, {.to = DataType::INT64}), {1}), 1);  // [batch, 1]
  ids = op.Where(op.Less(ids, full), ids, full);
  Value* positions = op.Range(b.scalar_i64(0), op.Div(seq, g), b.scalar_i64(1));
  Value* last = op.ReduceMax(ids, {1});  // [batch, 1]
  Value* segments = op.Cast(op.LessOrEqual(op.Unsqueeze(positions, {0}), last), {.to = DataType::INT64});
  return {ids, segments, positions};
}

Value* global_aggregates(Ops& op, Value* hidden, const GlobalBlocks& g) {
  auto sc = op.builder().scope("global_aggregates");
  // one_hot(block_ids)[..., :num_globals], padding (-1) in no block: [batch, seq, num_globals]
  Value* one_hot = op.Equal(op.Unsqueeze(g.block_ids, {2}), g.positions);
  Value* weights = op.CastLike(op.Transpose(one_hot, {.perm = {0, 2, 1}}), hidden);
  return op.MatMul(weights, hidden);
}

Value* side_relative_positions(Ops& op, const GlobalBlocks& g) {
  return op.Sub(g.positions, op.Unsqueeze(g.block_ids, {2}));
}

Value* side_attention_allowed(Ops& op, Value* attention_mask, const GlobalBlocks& g) {
  return op.Unsqueeze(op.Equal(op.Unsqueeze(attention_mask, {2}), op.Unsqueeze(g.segments, {1})), {1});
}

}  // namespace mobius
