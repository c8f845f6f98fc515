#include "blocks/relative_position_bias.h"

#include <cmath>

namespace mobius {

RelativePositionBias::RelativePositionBias(const RelativePositionBiasOptions& o) : o_(o) {
  weight = param("weight", {o.num_buckets, o.num_heads}, o.dtype);
}

Value* relative_position_bucket(Ops& op, Value* relative, int64_t num_buckets, int64_t max_distance,
                                bool bidirectional) {
  int64_t buckets = num_buckets;
  Value* base = nullptr;  // the bucket offset of positive distances (bidirectional)
  if (bidirectional) {
    buckets /= 2;
    base = op.Mul(op.Cast(op.Greater(relative, 0), {.to = DataType::INT64}), static_cast<double>(buckets));
    relative = op.Abs(relative);
  } else {
    relative = op.Neg(op.Min(relative, 0));
  }
  const int64_t max_exact = buckets / 2;
  Value* is_small = op.Less(relative, static_cast<double>(max_exact));
  // max_exact + log(rel / max_exact) / log(max_distance / max_exact) * (buckets - max_exact), in
  // float32 and truncated; rel 0 (a small one) is clamped to 1 to keep the log finite
  Value* rel_f = op.Cast(op.Max(relative, 1), {.to = DataType::FLOAT});
  Value* large = op.Mul(op.Div(op.Log(op.Div(rel_f, static_cast<float>(max_exact))),
                               static_cast<float>(std::log(static_cast<double>(max_distance) / max_exact))),
                        static_cast<float>(buckets - max_exact));
  large = op.Add(op.Cast(large, {.to = DataType::INT64}), static_cast<double>(max_exact));
  large = op.Min(large, static_cast<double>(buckets - 1));
  Value* b = op.Where(is_small, relative, large);
  return base ? op.Add(b, base) : b;
}

Value* RelativePositionBias::forward(Ops& op, Value* past, Value* query_length, Value* key_length) const {
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  Value* zero = b.scalar_i64(0);
  Value* one = b.scalar_i64(1);
  Value* start = op.Squeeze(past, {0});
  Value* q_pos = op.Unsqueeze(op.Range(start, op.Add(start, op.Squeeze(query_length, {0})), one), {1});
  Value* k_pos = op.Unsqueeze(op.Range(zero, op.Squeeze(key_length, {0}), one), {0});
  Value* values = op.Gather(weight->value(op), relative_position_bucket(op, op.Sub(k_pos, q_pos), o_.num_buckets, o_.max_distance, o_.bidirectional));  // [q, k, heads]
  return op.Unsqueeze(op.Transpose(values, {.perm = {2, 0, 1}}), {0});
}

Value* RelativePositionBias::lookup(Ops& op, Value* relative) const {
  auto s = enter(op);
  Value* values = op.Gather(weight->value(op), relative_position_bucket(op, relative, o_.num_buckets, o_.max_distance, o_.bidirectional));  // [batch, q, k, heads]
  return op.Transpose(values, {.perm = {0, 3, 1, 2}});
}

}  // namespace mobius
