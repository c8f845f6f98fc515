#include "blocks/rg_lru.h"

#include "blocks/activation.h"
#include "blocks/mamba.h"
#include "blocks/scan_body.h"
#include "blocks/spec_check.h"
#include "config/hf_config.h"
#include "util/error.h"

namespace mobius {

RgLruBlock::RgLruBlock(const RgLruBlockOptions& o) : o_(o) {
  check_size("hidden_size", o.hidden_size, kMaxHiddenSize);
  check_size("lru_width", o.lru_width, kMaxHiddenSize);
  check_size("num_attention_heads", o.num_heads, kMaxHeads);
  if (o.lru_width % o.num_heads != 0)
    throw FieldError("field 'num_attention_heads': must divide lru_width (" + std::to_string(o.lru_width) + ")");
  check_size("conv1d_width", o.conv_kernel, kMaxSmallSize, 2);
  if (!is_known_activation(o.hidden_activation))
    throw FieldError("field 'hidden_activation': unknown activation '" + o.hidden_activation + "'");
  const int64_t w = o.lru_width, h = o.num_heads, bw = w / h;
  linear_y = child<Linear>("linear_y", LinearOptions{.in_features = o.hidden_size, .out_features = w, .bias = true,
                                                     .dtype = o.dtype});
  linear_x = child<Linear>("linear_x", LinearOptions{.in_features = o.hidden_size, .out_features = w, .bias = true,
                                                     .dtype = o.dtype});
  linear_out = child<Linear>("linear_out", LinearOptions{.in_features = w, .out_features = o.hidden_size,
                                                         .bias = true, .dtype = o.dtype});
  conv_weight = param("conv_1d.weight", {w, 1, o.conv_kernel}, o.dtype);
  conv_bias = param("conv_1d.bias", {w}, o.dtype);
  recurrent_param = param("rg_lru.recurrent_param", {w}, o.dtype);
  input_gate_weight = param("rg_lru.input_gate_weight", {h, bw, bw}, o.dtype);
  input_gate_bias = param("rg_lru.input_gate_bias", {h, bw}, o.dtype);
  recurrent_gate_weight = param("rg_lru.recurrent_gate_weight", {h, bw, bw}, o.dtype);
  recurrent_gate_bias = param("rg_lru.recurrent_gate_bias", {h, bw}, o.dtype);
}

LayerStates RgLruBlock::states() const {
  return {{.kind = StateKind::recurrent,
           .tensors = {{.name = "conv_state", .shape = {"batch_size", o_.lru_width, o_.conv_kernel - 1}},
                       {.name = "recurrent_state", .shape = {"batch_size", o_.lru_width}, .dtype = DataType::FLOAT}}}};
}

Value* RgLruBlock::gate(Ops& op, Value* u, const Parameter* weight, const Parameter* bias) const {
  const int64_t w = o_.lru_width, h = o_.num_heads;
  // [batch, seq, H, 1, W / H] @ [H, W / H, W / H]: each head's block of channels times its matrix
  Value* blocks = op.MatMul(op.Reshape(u, {0, 0, h, 1, w / h}), weight->value(op));
  Value* z = op.Add(op.Reshape(blocks, {0, 0, w}), op.Reshape(bias->value(op), {w}));
  // 1 / (1 + exp(-z)): onnxruntime's Sigmoid returns 0 for a gate far below 0 (its relative error
  // there is 1), where a = exp(-8 r softplus(...)) needs r to its last digits
  return op.Reciprocal(op.Add(op.Exp(op.Neg(z)), 1.0));
}

MixerResult RgLruBlock::mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.size() == 2 && ctx.position_ids,
                "a recurrent block takes {conv_state, recurrent_state} and the position ids");
  auto s = enter(op);
  const int64_t w = o_.lru_width;
  Value* y = activation(op, o_.hidden_activation, linear_y->forward(op, x));
  auto [u, conv_state] = causal_conv1d(op, linear_x->forward(op, x), past[0], conv_weight->value(op),
                                       conv_bias->value(op), w, o_.conv_kernel, "");

  Value *lru, *recurrent_state;
  {
    auto rs = op.builder().scope("rg_lru");
    Value* input_gate = gate(op, u, input_gate_weight, input_gate_bias);
    Value* recurrent_gate = gate(op, u, recurrent_gate_weight, recurrent_gate_bias);
    // log a = -8 r softplus(recurrent_param); a and a^2 = exp(2 log a)
    Value* log_a = op.Mul(op.Mul(recurrent_gate, -8.0), op.Softplus(recurrent_param->value(op)));
    Value* a = op.Exp(log_a);
    // sqrt(1 - a^2) = sqrt(-expm1(2 log a)): for 2 log a above -0.03 (a^2 within float32's last
    // digits of 1) its series to y^4 (error below 1e-8 relative), else 1 - exp(2 log a)
    Value* y2 = op.Mul(log_a, 2.0);
    Value* series = op.Mul(op.Neg(y2), op.Add(op.Mul(y2, op.Add(op.Mul(y2, op.Add(op.Mul(y2, 1.0 / 24), 1.0 / 6)), 0.5)), 1.0));
    Value* multiplier = op.Sqrt(op.Where(op.Greater(y2, -0.03), series, op.Sub(1.0, op.Exp(y2))));
    Value* reset = op.Unsqueeze(op.Equal(ctx.position_ids, 0), {2});  // [batch, seq, 1]
    Value* normalized = op.Mul(op.Mul(u, input_gate), op.Where(reset, 1.0, multiplier));
    a = op.Where(reset, 0.0, a);

    // body: (h [batch, W]; a_t, x_t [batch, W]) -> (h = a_t h + x_t, y_t = h), in float32
    ScanBody body(op);
    Ops& bo = body.op();
    Value* h_in = body.input("h", {"batch_size", w});
    Value* a_t = body.input("a", {"batch_size", w});
    Value* x_t = body.input("x", {"batch_size", w});
    Value* h = bo.Add(bo.Mul(a_t, h_in), x_t);
    body.output(h, "h_out", {"batch_size", w});
    body.output(bo.Identity(h), "y", {"batch_size", w});
    std::vector<Value*> out = op.Scan({to_float(op, past[1]), to_float(op, a), to_float(op, normalized)},
                                      body.graph(),
                                      {.num_scan_inputs = 2, .scan_input_axes = {1, 1}, .scan_output_axes = {1}});
    lru = o_.dtype == DataType::FLOAT ? out[1] : op.Cast(out[1], {.to = o_.dtype});
    recurrent_state = out[0];
  }
  return {linear_out->forward(op, op.Mul(lru, y)), {conv_state, recurrent_state}};
}

}  // namespace mobius
