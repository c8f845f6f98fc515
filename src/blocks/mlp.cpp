#include "blocks/mlp.h"

#include "util/error.h"

namespace mobius {

void FeedForward::init_activation(const std::string& hidden_act, DataType dtype) {
  act_ = hidden_act;
  if (hidden_act == "xielu") act_fn_ = child<XIELU>("act_fn", dtype);
}

Value* clamped_swiglu(Ops& op, Value* gate, Value* up, const SwigluClamp& c) {
  const double limit = c.limit;
  gate = op.Min(gate, limit);
  up = op.Max(op.Min(up, limit), -limit);
  Value* glu = op.Mul(gate, op.Sigmoid(op.Mul(gate, c.alpha)));
  return op.Mul(op.Add(up, 1.0), glu);
}

Value* FeedForward::act(Ops& op, Value* x) const {
  return act_fn_ ? act_fn_->forward(op, x) : activation(op, act_, x);
}

GatedMLP::GatedMLP(const MLPOptions& o)
    : intermediate_size_(o.intermediate_size),
      gate_multiplier_(o.gate_multiplier),
      down_multiplier_(o.down_multiplier),
      swiglu_clamp_(o.swiglu_clamp) {
  init_activation(o.hidden_act, o.dtype);
  const int64_t h = o.hidden_size, i = o.intermediate_size;
  if (o.fused_gate_up) {
    gate_up_proj = child<Linear>(o.gate_up_name, LinearOptions{h, 2 * i, o.bias, o.dtype, o.conv1d});
  } else {
    gate_proj = child<Linear>(o.gate_name, LinearOptions{h, i, o.bias, o.dtype, o.conv1d});
    up_proj = child<Linear>(o.gated_up_name, LinearOptions{h, i, o.bias, o.dtype, o.conv1d});
  }
  down_proj = child<Linear>(o.gated_down_name, LinearOptions{i, h, o.down_bias.value_or(o.bias), o.dtype, o.conv1d});
  if (const auto& n = o.down_input_norm)
    down_input_norm = adopt(n->name, make_norm({.dim = i, .eps = n->eps, .dtype = o.dtype}));
}

Value* GatedMLP::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value *gate, *up;
  if (gate_up_proj) {
    auto parts = op.Split(gate_up_proj->forward(op, x), {intermediate_size_, intermediate_size_}, {.axis = -1});
    gate = parts[0];
    up = parts[1];
  } else {
    gate = gate_proj->forward(op, x);
    up = up_proj->forward(op, x);
  }
  if (gate_multiplier_ != 1.0f) gate = op.Mul(gate, gate_multiplier_);
  Value* h = swiglu_clamp_ ? clamped_swiglu(op, gate, up, *swiglu_clamp_) : op.Mul(act(op, gate), up);
  Value* y = down_proj->forward(op, down_input_norm ? down_input_norm->forward(op, h) : h);
  return down_multiplier_ == 1.0f ? y : op.Mul(y, down_multiplier_);
}

MLP::MLP(const MLPOptions& o) {
  init_activation(o.hidden_act, o.dtype);
  up = child<Linear>(o.up_name, LinearOptions{o.hidden_size, o.intermediate_size, o.bias, o.dtype, o.conv1d});
  down = child<Linear>(o.down_name, LinearOptions{o.intermediate_size, o.hidden_size, o.bias, o.dtype, o.conv1d});
}

void FeedForwardSum::add(const std::string& name, std::unique_ptr<FeedForward> part) {
  parts_.push_back(adopt(name, std::move(part)));
}

Value* FeedForwardSum::forward(Ops& op, Value* x) const {
  MOBIUS_ASSERT(!parts_.empty(), "FeedForwardSum without parts");
  Value* sum = parts_.front()->forward(op, x);
  for (size_t i = 1; i < parts_.size(); ++i) sum = op.Add(sum, parts_[i]->forward(op, x));
  return sum;
}

NormedFeedForward::NormedFeedForward(const std::string& name, std::unique_ptr<FeedForward> ff,
                                     const std::string& norm_name, const NormOptions& norm_options)
    : part(adopt(name, std::move(ff))) {
  if (!norm_name.empty()) norm = adopt(norm_name, make_norm(norm_options));
}

Value* NormedFeedForward::forward(Ops& op, Value* x) const {
  Value* y = part->forward(op, x);
  return norm ? norm->forward(op, y) : y;
}

Value* MLP::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return down->forward(op, act(op, up->forward(op, x)));
}

std::unique_ptr<FeedForward> make_mlp(const MLPOptions& o) {
  if (o.gated) return std::make_unique<GatedMLP>(o);
  return std::make_unique<MLP>(o);
}

}  // namespace mobius
