#include "blocks/top2_moe.h"

#include <cstring>
#include <limits>
#include <tuple>
#include <utility>

namespace mobius {

namespace {

// The rank of each token among those of its expert (mask [N, E] 0/1 float32), in `order` ([N]
// int64, the token at each rank; null: token order): the exclusive running count of `mask` along
// that order, at the token's own position.
Value* locations(Ops& op, Value* mask, Value* order, Value* inverse) {
  GraphBuilder& b = op.builder();
  if (!order) return op.Sub(op.CumSum(mask, b.scalar_i64(0)), 1.0f);
  Value* sorted = op.Gather(mask, order);
  Value* count = op.Mul(op.Sub(op.CumSum(sorted, b.scalar_i64(0)), 1.0f), sorted);
  return op.Gather(count, inverse);
}

// ceil(fraction * n) as Python computes it (float64): n int64 [1] -> int64 [1].
Value* capacity_of(Ops& op, Value* n, double fraction) {
  GraphBuilder& b = op.builder();
  uint8_t bytes[sizeof(double)];
  std::memcpy(bytes, &fraction, sizeof(double));
  Value* x = op.Mul(op.Cast(n, {.to = DataType::DOUBLE}), b.constant(DataType::DOUBLE, {}, bytes));
  Value* t = op.Cast(x, {.to = DataType::INT64});  // x >= 0: truncation is floor
  return op.Add(t, op.Cast(op.Greater(x, op.Cast(t, {.to = DataType::DOUBLE})), {.to = DataType::INT64}));
}

}  // namespace

Top2SparseMLP::Top2SparseMLP(const Top2MoEOptions& o) : o_(o) {
  classifier = child<Linear>("router.classifier", LinearOptions{o.d_model, o.num_experts, o.router_bias, o.dtype});
  const MLPOptions m{.hidden_size = o.d_model, .intermediate_size = o.ffn_dim, .hidden_act = o.act, .bias = true,
                     .dtype = o.dtype, .gated = false};
  for (int64_t e = 0; e < o.num_experts; ++e)
    experts.push_back(adopt("experts.expert_" + std::to_string(e), make_mlp(m)));
}

Value* Top2SparseMLP::route(Ops& op, Value* x2, Value* attention_mask) const {
  GraphBuilder& b = op.builder();
  const auto f32 = [&](Value* v) { return op.Cast(v, {.to = DataType::FLOAT}); };
  Value* logits = classifier->forward(op, x2);
  if (logits->dtype != DataType::FLOAT) logits = f32(logits);
  Value* probs = op.Softmax(logits);
  Value* experts_axis = op.Range(b.scalar_i64(0), b.scalar_i64(o_.num_experts), b.scalar_i64(1));
  TopKOutputs first = op.TopK(probs, 1);  // [N, 1]: argmax, ties to the lower index
  Value* top1 = op.Equal(first.indices, experts_axis);
  Value* others = op.Where(top1, b.constant_f32({-std::numeric_limits<float>::infinity()}, {}), logits);
  Value* top2 = op.Equal(op.TopK(others, 1).indices, experts_axis);
  Value* m1 = f32(top1);
  Value* m2 = f32(top2);
  const auto normalized = [&](Value* k1, Value* k2) {  // normalize_router_probabilities: [N, 1] each
    Value* p1 = op.ReduceSum(op.Mul(probs, k1), {1});
    Value* p2 = op.ReduceSum(op.Mul(probs, k2), {1});
    Value* denom = op.Max(op.Add(p1, p2), std::numeric_limits<float>::epsilon());
    return std::pair{op.Div(p1, denom), op.Div(p2, denom)};
  };
  auto [p1, p2] = normalized(m1, m2);  // kept with normalize_router_prob_before_dropping
  if (attention_mask && !o_.router_ignore_padding_tokens) {
    Value* token = f32(op.Reshape(attention_mask, {-1, 1}));
    m1 = op.Mul(m1, token);
    m2 = op.Mul(m2, token);
  }
  Value* n = op.Shape(x2, {.start = 0, .end = 1});
  Value *order = nullptr, *inverse = nullptr;
  if (o_.batch_prioritized_routing) {  // the tokens by their largest probability, descending
    Value* importance = op.ReduceMax(probs, {1}, {.keepdims = 0});
    order = b.add_node("TopK", {importance, n}, {{"axis", int64_t{0}}, {"largest", int64_t{1}}, {"sorted", int64_t{1}}},
                       {DataType::FLOAT, DataType::INT64})[1];
    Value* ranks = op.Range(b.scalar_i64(0), op.Squeeze(n, {0}), b.scalar_i64(1));
    inverse = op.ScatterElements(ranks, order, ranks);  // inverse[order[r]] = r
  }
  Value* loc1 = locations(op, m1, order, inverse);
  Value* loc2 = op.Add(locations(op, m2, order, inverse), op.ReduceSum(m1, {0}));
  Value* capacity = f32(o_.moe_eval_capacity_token_fraction > 0 ? capacity_of(op, n, o_.moe_eval_capacity_token_fraction)
                                                                : b.ints({o_.expert_capacity}));
  m1 = op.Mul(m1, f32(op.Less(loc1, capacity)));
  m2 = op.Mul(m2, f32(op.Less(loc2, capacity)));
  if (!o_.normalize_router_prob_before_dropping) std::tie(p1, p2) = normalized(m1, m2);
  return op.Add(op.Mul(p1, m1), op.Mul(p2, m2));
}

Value* Top2SparseMLP::forward(Ops& op, Value* x, Value* attention_mask) const {
  auto s = enter(op);
  Value* x2 = op.Reshape(x, {-1, o_.d_model});
  Value* gates = op.Mul(route(op, x2, attention_mask), 1.0f - o_.moe_token_dropout);
  if (o_.dtype != DataType::FLOAT) gates = op.Cast(gates, {.to = o_.dtype});
  Value* out = nullptr;
  for (int64_t e = 0; e < o_.num_experts; ++e) {
    Value* y = op.Mul(experts[e]->forward(op, x2), op.Slice(gates, {e}, {e + 1}, {-1}));
    out = out ? op.Add(out, y) : y;
  }
  return op.Reshape(out, op.Shape(x));
}

}  // namespace mobius
