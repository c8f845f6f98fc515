#include "blocks/moe_router.h"

#include <limits>

#include "util/error.h"

namespace mobius {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Zeros with the shape and dtype of x.
Value* zeros_like(Ops& op, Value* x) {
  return op.Expand(op.builder().constant_float({0.0f}, {}, x->dtype), op.Shape(x));
}

// The bool mask, shaped like `like` [tokens, n], that is true at the int64 `indices` [tokens, k].
Value* mask_at(Ops& op, Value* like, Value* indices) {
  Value* ones = op.Expand(op.builder().constant_float({1.0f}, {}, like->dtype), op.Shape(indices));
  Value* hits = op.ScatterElements(zeros_like(op, like), indices, ones, {.axis = 1});
  return op.Cast(hits, {.to = DataType::BOOL});
}

}  // namespace

MoERouter::MoERouter(const RouterOptions& o) : o_(o) {
  MOBIUS_ASSERT(o.top_k >= 1 && o.top_k <= o.num_experts, "router top_k within num_experts");
  MOBIUS_ASSERT(o.n_group >= 1 && o.num_experts % o.n_group == 0, "router n_group divides num_experts");
  MOBIUS_ASSERT(o.topk_group >= 1 && o.topk_group <= o.n_group, "router topk_group <= n_group");
  MOBIUS_ASSERT(o.kind != RouterKind::sigmoid_groups || o.num_experts / o.n_group >= 2,
                "sigmoid_groups needs two experts per group");
  weight = param("weight", {o.hidden_size, o.num_experts}, o.dtype, /*transpose=*/true);
  if (o.bias) bias = param("bias", {o.num_experts}, o.dtype);
  if (o.corrected() && o.own_score_bias)
    e_score_correction_bias = param("e_score_correction_bias", {o.num_experts}, o.dtype);
}

Value* MoERouter::limit_groups(Ops& op, Value* scores, bool group_top2_sum, float fill) const {
  if (o_.topk_group == o_.n_group) return scores;  // every group kept
  GraphBuilder& b = op.builder();
  Value* grouped = op.Reshape(scores, {-1, o_.n_group, o_.num_experts / o_.n_group});
  Value* group_scores = group_top2_sum
                            ? op.ReduceSum(op.TopK(grouped, 2).values, {-1}, {.keepdims = 0})
                            : op.ReduceMax(grouped, {-1}, {.keepdims = 0});  // [tokens, n_group]
  Value* best = op.TopK(group_scores, o_.topk_group).indices;
  Value* keep = op.Unsqueeze(mask_at(op, group_scores, best), {-1});  // [tokens, n_group, 1]
  Value* kept = op.Where(keep, grouped, b.constant_f32({fill}, {}));
  return op.Reshape(kept, {-1, o_.num_experts});
}

Value* MoERouter::sparsemixer(Ops& op, Value* logits) const {
  GraphBuilder& b = op.builder();
  Value* neg_inf = b.constant_f32({kNegInf}, {});
  Value* abs_logits = op.Abs(logits);
  Value* candidates = logits;  // the logits still eligible
  Value* routing = nullptr;
  for (int pick = 0; pick < 2; ++pick) {
    TopKOutputs top = op.TopK(candidates, 1);  // [tokens, 1]
    // (max - l) / max(|l|, max) > 2 * eps: too far below this pick's maximum to share its softmax
    Value* factor = op.Max(abs_logits, top.values);
    Value* far = op.Greater(op.Div(op.Sub(top.values, logits), factor), 2.0 * o_.jitter_eps);
    Value* probs = op.Softmax(op.Where(far, neg_inf, candidates));
    Value* chosen = mask_at(op, logits, top.indices);
    Value* weight = op.Where(chosen, probs, 0.0f);
    routing = routing ? op.Add(routing, weight) : weight;
    candidates = op.Where(chosen, neg_inf, candidates);
  }
  return routing;
}

Value* MoERouter::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* logits = op.MatMul(x, weight->value(op));
  if (bias) logits = op.Add(logits, bias->value(op));
  if (logits->dtype != DataType::FLOAT) logits = op.Cast(logits, {.to = DataType::FLOAT});
  if (const float c = o_.logit_softcapping; c > 0.0f) logits = op.Mul(op.Tanh(op.Div(logits, c)), c);
  Value* routing = nullptr;
  switch (o_.kind) {
    case RouterKind::softmax_topk: {
      Value* probs = limit_groups(op, op.Softmax(logits), /*group_top2_sum=*/false, 0.0f);
      TopKOutputs top = op.TopK(probs, o_.top_k);
      Value* w = top.values;
      if (o_.norm_topk_prob && o_.norm_topk_p == 1.0) w = op.Div(w, op.ReduceSum(w, {-1}));
      if (o_.norm_topk_prob && o_.norm_topk_p != 1.0)  // the picked p are positive: |p| = p
        w = op.Div(w, op.Pow(op.ReduceSum(op.Pow(w, o_.norm_topk_p), {-1}), 1.0 / o_.norm_topk_p));
      if (o_.routed_scaling_factor != 1.0f) w = op.Mul(w, o_.routed_scaling_factor);
      routing = op.ScatterElements(zeros_like(op, probs), top.indices, w, {.axis = 1});
      break;
    }
    case RouterKind::topk_softmax: {
      TopKOutputs top = op.TopK(logits, o_.top_k);
      routing = op.ScatterElements(zeros_like(op, logits), top.indices, op.Softmax(top.values), {.axis = 1});
      break;
    }
    case RouterKind::topk_sigmoid: {
      TopKOutputs top = op.TopK(logits, o_.top_k);
      Value* w = op.Sigmoid(top.values);
      if (o_.norm_topk_prob) w = op.Div(w, op.ReduceSum(w, {-1}));
      routing = op.ScatterElements(zeros_like(op, logits), top.indices, w, {.axis = 1});
      break;
    }
    case RouterKind::sigmoid_groups:
    case RouterKind::sigmoid_logit_correction:
    case RouterKind::softmax_correction: {
      Value* scores = o_.kind == RouterKind::softmax_correction ? op.Softmax(logits) : op.Sigmoid(logits);
      Value* choice = scores;
      if (o_.corrected()) {
        Value* correction = e_score_correction_bias->value(op);
        if (correction->dtype != DataType::FLOAT) correction = op.Cast(correction, {.to = DataType::FLOAT});
        choice = op.Add(o_.kind == RouterKind::sigmoid_logit_correction ? logits : scores, correction);
      }
      choice = limit_groups(op, choice, /*group_top2_sum=*/true, o_.groups_fill_zero ? 0.0f : kNegInf);
      Value* picked = mask_at(op, choice, op.TopK(choice, o_.top_k).indices);
      routing = op.Where(picked, scores, 0.0f);
      if (o_.norm_topk_prob) routing = op.Div(routing, op.Add(op.ReduceSum(routing, {-1}), o_.norm_topk_eps));
      if (o_.routed_scaling_factor != 1.0f) routing = op.Mul(routing, o_.routed_scaling_factor);
      break;
    }
    case RouterKind::sparsemixer:
      routing = sparsemixer(op, logits);
      break;
  }
  return o_.dtype == DataType::FLOAT ? routing : op.Cast(routing, {.to = o_.dtype});
}

}  // namespace mobius
