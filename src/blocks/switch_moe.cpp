#include "blocks/switch_moe.h"

namespace mobius {

SwitchSparseMLP::SwitchSparseMLP(const SwitchMoEOptions& o) : o_(o) {
  classifier = child<Linear>("router.classifier", LinearOptions{o.d_model, o.num_experts, o.router_bias, o.dtype});
  MLPOptions m{.hidden_size = o.d_model, .intermediate_size = o.d_ff, .hidden_act = o.act, .dtype = o.dtype,
               .gated = false};
  m.up_name = "wi";
  m.down_name = "wo";
  for (int64_t e = 0; e < o.num_experts; ++e)
    experts.push_back(adopt("experts.expert_" + std::to_string(e), make_mlp(m)));
}

Value* SwitchSparseMLP::route(Ops& op, Value* x) const {
  GraphBuilder& b = op.builder();
  Value* logits = classifier->forward(op, x);
  if (logits->dtype != DataType::FLOAT) logits = op.Cast(logits, {.to = DataType::FLOAT});
  TopKOutputs top = op.TopK(op.Softmax(logits), 1);  // [batch, seq, 1]: argmax, ties to the lower index
  Value* experts_axis = op.Range(b.scalar_i64(0), b.scalar_i64(o_.num_experts), b.scalar_i64(1));
  Value* chosen = op.Cast(op.Equal(top.indices, experts_axis), {.to = DataType::FLOAT});  // one-hot
  Value* priority = op.CumSum(chosen, b.scalar_i64(1));  // per sequence
  Value* kept = op.Mul(chosen, op.Cast(op.LessOrEqual(priority, static_cast<double>(o_.expert_capacity)),
                                       {.to = DataType::FLOAT}));
  Value* weights = op.Mul(kept, top.values);
  return o_.dtype == DataType::FLOAT ? weights : op.Cast(weights, {.to = o_.dtype});
}

Value* SwitchSparseMLP::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* weights = route(op, x);
  Value* out = nullptr;
  for (int64_t e = 0; e < o_.num_experts; ++e) {
    Value* w = op.Slice(weights, {e}, {e + 1}, {-1});
    Value* y = op.Mul(experts[e]->forward(op, x), w);
    out = out ? op.Add(out, y) : y;
  }
  return out;
}

}  // namespace mobius
