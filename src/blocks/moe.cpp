#include "blocks/moe.h"

#include <limits>

#include "blocks/activation.h"
#include "util/error.h"

namespace mobius {

SparseMoE::SparseMoE(const MoEOptions& o) : o_(o) {
  RouterOptions r = o.router;
  r.hidden_size = o.hidden_size;
  r.dtype = o.dtype;
  r.own_score_bias = o.score_bias_name.empty();
  router = child<MoERouter>(o.router_name, r);
  if (r.corrected() && !r.own_score_bias) {
    const Shape shape = o.score_bias_row ? Shape{1, r.num_experts} : Shape{r.num_experts};
    router->e_score_correction_bias = param(o.score_bias_name, shape, o.dtype);
  }
  MOBIUS_ASSERT(o.identity_experts >= 0 && o.identity_experts < r.num_experts, "MoE identity experts within the router's");
  MOBIUS_ASSERT(o.identity_experts == 0 || (o.latent_size == 0 && o.routing_applied == RoutingApplied::outputs),
                "MoE identity experts read the block's input and weight outputs");
  computed_ = r.num_experts - o.identity_experts;
  const int64_t E = computed_, I = o.intermediate_size;
  const int64_t H = o.latent_size > 0 ? o.latent_size : o.hidden_size;  // the experts' input and output
  if (o.latent_size > 0) {
    fc1_latent_proj = child<Linear>("fc1_latent_proj", LinearOptions{o.hidden_size, H, o.latent_bias, o.dtype});
    fc2_latent_proj = child<Linear>("fc2_latent_proj", LinearOptions{H, o.hidden_size, o.latent_bias, o.dtype});
  }
  switch (o.layout) {
    case ExpertLayout::per_expert:
      for (int64_t e = 0; e < E; ++e) {
        const std::string p = "experts." + std::to_string(e) + ".";
        gate_.push_back(param(p + o.gate_name + ".weight", {H, I}, o.dtype, /*transpose=*/true));
        up_.push_back(param(p + o.up_name + ".weight", {H, I}, o.dtype, /*transpose=*/true));
        down_.push_back(param(p + o.down_name + ".weight", {I, H}, o.dtype, /*transpose=*/true));
      }
      break;
    case ExpertLayout::stacked:
      gate_up_ = param(o.stacked_gate_up_name, {E, H, 2 * I}, o.dtype, /*transpose=*/true);
      down_w_ = param(o.stacked_down_name, {E, I, H}, o.dtype, /*transpose=*/true);
      break;
    case ExpertLayout::stacked_interleaved:  // stored [E, in, out] already
    case ExpertLayout::stacked_in_out_biased:
      gate_up_ = param("experts.gate_up_proj", {E, H, 2 * I}, o.dtype);
      gate_up_bias_ = param("experts.gate_up_proj_bias", {E, 2 * I}, o.dtype);
      down_w_ = param("experts.down_proj", {E, I, H}, o.dtype);
      down_bias_ = param("experts.down_proj_bias", {E, H}, o.dtype);
      break;
    case ExpertLayout::stacked_in_out:  // stored [E, in, out] already
      gate_up_ = param(o.stacked_gate_up_name, {E, H, 2 * I}, o.dtype);
      down_w_ = param(o.stacked_down_name, {E, I, H}, o.dtype);
      break;
    case ExpertLayout::stacked_rows:
      gate_w_ = param(o.gate_name, {H, E * I}, o.dtype, /*transpose=*/true);
      up_w_ = param(o.up_name, {H, E * I}, o.dtype, /*transpose=*/true);
      down_w_ = param(o.down_name, {E * I, H}, o.dtype);
      break;
    case ExpertLayout::per_expert_ungated:
      for (int64_t e = 0; e < E; ++e) {
        const std::string p = "experts." + std::to_string(e) + ".";
        up_.push_back(param(p + o.up_name + ".weight", {H, I}, o.dtype, /*transpose=*/true));
        down_.push_back(param(p + o.down_name + ".weight", {I, H}, o.dtype, /*transpose=*/true));
      }
      break;
  }
  if (!o.shared_expert_name.empty()) {
    shared_expert = adopt(o.shared_expert_name, make_mlp(o.shared_expert));
    if (o.shared_expert_gate)
      shared_expert_gate = child<Linear>("shared_expert_gate", LinearOptions{o.hidden_size, 1, false, o.dtype});
  }
  if (o.bias) bias = param("bias", {o.hidden_size}, o.dtype);
}

Value* SparseMoE::stack(Ops& op, const std::vector<Parameter*>& per_expert) const {
  std::vector<Value*> parts;
  for (const Parameter* p : per_expert) parts.push_back(op.Unsqueeze(p->value(op), {0}));
  return op.Concat(parts, {.axis = 0});
}

Value* SparseMoE::experts(Ops& op, Value* x) const {
  auto s = op.builder().scope("experts");
  GraphBuilder& b = op.builder();
  const int64_t I = o_.intermediate_size;
  if (o_.layout == ExpertLayout::per_expert_ungated)  // [tokens, H] @ [E, H, I] -> act -> @ [E, I, H]
    return op.MatMul(activation(op, o_.hidden_act, op.MatMul(x, stack(op, up_))), stack(op, down_));
  Value *gate, *up;
  if (o_.layout == ExpertLayout::per_expert) {
    gate = op.MatMul(x, stack(op, gate_));  // [tokens, H] @ [E, H, I] -> [E, tokens, I]
    up = op.MatMul(x, stack(op, up_));
  } else if (o_.layout == ExpertLayout::stacked_rows) {  // [tokens, H] @ [H, E * I] -> [E, tokens, I]
    auto all_experts = [&](const Parameter* w) {
      Value* y = op.Reshape(op.MatMul(x, w->value(op)), {-1, computed_, I});
      return op.Transpose(y, {.perm = {1, 0, 2}});
    };
    gate = all_experts(gate_w_);
    up = all_experts(up_w_);
  } else {
    Value* gate_up = op.MatMul(x, gate_up_->value(op));  // [E, tokens, 2I]
    if (gate_up_bias_) gate_up = op.Add(gate_up, op.Unsqueeze(gate_up_bias_->value(op), {1}));
    if (o_.layout != ExpertLayout::stacked_interleaved) {  // gate | up halves
      gate = op.Slice(gate_up, {0}, {I}, {-1});
      up = op.Slice(gate_up, {I}, {2 * I}, {-1});
    } else {
      const int64_t end = std::numeric_limits<int64_t>::max();
      gate = op.Slice(gate_up, b.ints({0}), b.ints({end}), b.ints({-1}), b.ints({2}));
      up = op.Slice(gate_up, b.ints({1}), b.ints({end}), b.ints({-1}), b.ints({2}));
    }
  }
  Value* h;
  if (o_.swiglu_limit > 0.0f) {
    h = clamped_swiglu(op, gate, up, {o_.swiglu_limit, o_.swiglu_alpha});
  } else {
    h = op.Mul(activation(op, o_.hidden_act, gate), up);
  }
  Value* down = o_.layout == ExpertLayout::per_expert ? stack(op, down_) : down_w_->value(op);
  if (o_.layout == ExpertLayout::stacked_rows) down = op.Reshape(down, {computed_, I, -1});
  Value* y = op.MatMul(h, down);
  if (down_bias_) y = op.Add(y, op.Unsqueeze(down_bias_->value(op), {1}));
  return y;  // [E, tokens, H]
}

Value* SparseMoE::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* flat = op.Reshape(x, {-1, o_.hidden_size});                               // [tokens, H]
  Value* routing = op.Transpose(router->forward(op, flat), {.perm = {1, 0}});     // [E, tokens]
  Value* identity_weights = nullptr;  // [tokens]: the identity experts' summed routing weights
  if (o_.identity_experts > 0) {
    const int64_t E = o_.router.num_experts;
    identity_weights = op.ReduceSum(op.Slice(routing, {computed_}, {E}, {0}), {0}, {.keepdims = 0});
    routing = op.Slice(routing, {0}, {computed_}, {0});
  }
  Value* expert_in = fc1_latent_proj ? fc1_latent_proj->forward(op, flat) : flat;
  Value* weighted = o_.routing_applied == RoutingApplied::inputs
                       ? experts(op, op.Mul(op.Unsqueeze(routing, {-1}), expert_in))
                       : op.Mul(experts(op, expert_in), op.Unsqueeze(routing, {-1}));  // [E, tokens, H]
  Value* out = op.ReduceSum(weighted, {0}, {.keepdims = 0});
  if (identity_weights) out = op.Add(out, op.Mul(flat, op.Unsqueeze(identity_weights, {-1})));
  if (fc2_latent_proj) out = fc2_latent_proj->forward(op, out);
  if (shared_expert) {
    Value* shared = shared_expert->forward(op, flat);
    if (shared_expert_gate) shared = op.Mul(op.Sigmoid(shared_expert_gate->forward(op, flat)), shared);
    out = op.Add(out, shared);
    if (o_.shared_expert_average) out = op.Mul(out, 0.5);
  }
  if (bias) out = op.Add(out, bias->value(op));
  return op.Reshape(out, op.Shape(x));
}

}  // namespace mobius
