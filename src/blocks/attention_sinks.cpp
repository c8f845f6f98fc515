#include "blocks/attention_sinks.h"

#include "util/error.h"

namespace mobius {

AttentionOutputs attention_with_sinks(Ops& op, Value* q, Value* k, Value* v, Value* mask,
                                      Value* past_key, Value* past_value, Value* sinks,
                                      const SinkAttentionSizes& n) {
  MOBIUS_ASSERT(n.num_kv_heads > 0 && n.num_heads % n.num_kv_heads == 0, "kv heads divide heads");
  MOBIUS_ASSERT(!past_key == !past_value, "attention with sinks: both past inputs or neither");
  auto s = op.builder().scope("attention_sinks");
  const int64_t groups = n.num_heads / n.num_kv_heads;
  Value* present_key = past_key ? op.Concat({past_key, k}, {.axis = 2}) : k;
  Value* present_value = past_value ? op.Concat({past_value, v}, {.axis = 2}) : v;
  Value* q5 = op.Reshape(q, {0, n.num_kv_heads, groups, -1, n.head_dim});  // [b, kv, g, seq, d]
  Value* k5 = op.Unsqueeze(present_key, {2});                                // [b, kv, 1, total, d]
  Value* scores = op.Mul(op.MatMul(q5, op.Transpose(k5, {.perm = {0, 1, 2, 4, 3}})), n.scale);
  scores = op.Add(scores, op.Unsqueeze(mask, {1}));                          // [b, kv, g, seq, total]
  // the sink column: sinks[h] for every (batch, query)
  Value* column_shape = op.Concat({op.Shape(scores, {.start = 0, .end = 4}), op.builder().ints({1})}, {.axis = 0});
  Value* sink = op.Expand(op.Reshape(sinks, {1, n.num_kv_heads, groups, 1, 1}), column_shape);
  Value* probs = op.Softmax(op.Concat({scores, sink}, {.axis = -1}), {.axis = -1});
  probs = op.Slice(probs, {0}, {-1}, {-1});                                  // drop the sink
  Value* y = op.MatMul(probs, op.Unsqueeze(present_value, {2}));             // [b, kv, g, seq, dv]
  const int64_t value_dim = n.value_head_dim ? n.value_head_dim : n.head_dim;
  return {op.Reshape(y, {0, n.num_heads, -1, value_dim}), present_key, present_value};
}

}  // namespace mobius
