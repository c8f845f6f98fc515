#include "blocks/mamba.h"

#include <limits>

#include "blocks/activation.h"
#include "blocks/scan_body.h"
#include "blocks/spec_check.h"
#include "util/error.h"

namespace mobius {

Value* to_float(Ops& op, Value* x) { return x->dtype == DataType::FLOAT ? x : op.Cast(x, {.to = DataType::FLOAT}); }

Value* step_token_mask(Ops& op, Value* attention_mask, Value* tokens, DataType dtype) {
  Value* seq = op.Shape(tokens, {.start = 1, .end = 2});
  Value* step_mask = op.Slice(attention_mask, op.Neg(seq), op.builder().ints({std::numeric_limits<int64_t>::max()}),
                              op.builder().ints({1}));
  return op.Cast(step_mask, {.to = dtype});
}

std::pair<Value*, Value*> causal_conv1d(Ops& op, Value* x, Value* past, Value* weight, Value* bias, int64_t channels,
                                        int64_t kernel, const std::string& act) {
  Value* window = op.Concat({past, op.Transpose(x, {.perm = {0, 2, 1}})}, {.axis = 2});  // [batch, C, K - 1 + seq]
  Value* state = op.Slice(window, {-(kernel - 1)}, {std::numeric_limits<int64_t>::max()}, {2});
  ConvAttrs depthwise;
  depthwise.group = channels;
  Value* conv = op.Conv(window, weight, bias, depthwise);  // [batch, C, seq]: no padding
  return {op.Transpose(act.empty() ? conv : activation(op, act, conv), {.perm = {0, 2, 1}}), state};
}

MambaMixer::MambaMixer(const MambaOptions& o) : o_(o) {
  check_mamba(o);
  const int64_t c = o.intermediate_size, n = o.state_size, r = o.time_step_rank;
  in_proj = child<Linear>("in_proj", LinearOptions{.in_features = o.hidden_size, .out_features = 2 * c,
                                                   .bias = o.use_bias, .dtype = o.dtype});
  conv_weight = param("conv1d.weight", {c, 1, o.conv_kernel}, o.dtype);
  if (o.use_conv_bias) conv_bias = param("conv1d.bias", {c}, o.dtype);
  x_proj = child<Linear>("x_proj", LinearOptions{.in_features = c, .out_features = r + 2 * n, .dtype = o.dtype});
  dt_proj = child<Linear>("dt_proj", LinearOptions{.in_features = r, .out_features = c, .bias = true, .dtype = o.dtype});
  if (o.dt_b_c_rms_eps) {  // FalconMamba's weightless norms (their dummy weights are not saved), Jamba's with
    auto norm = [&](const char* name, int64_t dim) {
      return child<RMSNorm>(name, NormOptions{.dim = dim, .eps = *o.dt_b_c_rms_eps, .dtype = o.dtype,
                                              .elementwise_affine = o.dt_b_c_norm_weights});
    };
    dt_layernorm = norm("dt_layernorm", r);
    b_layernorm = norm("b_layernorm", n);
    c_layernorm = norm("c_layernorm", n);
  }
  A_log = param("A_log", {c, n}, o.dtype);
  D = param("D", {c}, o.dtype);
  out_proj = child<Linear>("out_proj", LinearOptions{.in_features = c, .out_features = o.hidden_size,
                                                     .bias = o.use_bias, .dtype = o.dtype});
}

LayerStates MambaMixer::states() const {
  const int64_t c = o_.intermediate_size;
  return {{.kind = StateKind::recurrent,
          .tensors = {{.name = "conv_state", .shape = {"batch_size", c, o_.conv_kernel - 1}},
                      {.name = "recurrent_state", .shape = {"batch_size", c, o_.state_size}}}}};
}

std::pair<Value*, Value*> MambaMixer::scan(Ops& op, Value* h0, Value* u, Value* dt, Value* b, Value* c) const {
  const int64_t ch = o_.intermediate_size, n = o_.state_size;
  Value* a = op.Neg(op.Exp(to_float(op, A_log->value(op))));                  // [C, N]
  Value* dA = op.Exp(op.Mul(op.Unsqueeze(dt, {3}), a));                       // [batch, seq, C, N]
  Value* dBu = op.Mul(op.Unsqueeze(op.Mul(dt, u), {3}), op.Unsqueeze(b, {2}));  // [batch, seq, C, N]
  Value* cs = op.Unsqueeze(c, {3});                                           // [batch, seq, N, 1]

  // body: (h [batch, C, N]; dA_t, dBu_t [batch, C, N], C_t [batch, N, 1]) -> (h, y_t [batch, C, 1])
  ScanBody body(op);
  Ops& bo = body.op();
  Value* h_in = body.input("h", {"batch_size", ch, n});
  Value* da_t = body.input("dA", {"batch_size", ch, n});
  Value* dbu_t = body.input("dBu", {"batch_size", ch, n});
  Value* c_t = body.input("C", {"batch_size", n, 1});
  Value* h = bo.Add(bo.Mul(da_t, h_in), dbu_t);
  Value* y = bo.MatMul(h, c_t);
  body.output(h, "h_out", {"batch_size", ch, n});
  body.output(y, "y", {"batch_size", ch, 1});

  std::vector<Value*> out = op.Scan({h0, dA, dBu, cs}, body.graph(),
                                    {.num_scan_inputs = 3, .scan_input_axes = {1, 1, 1}, .scan_output_axes = {1}});
  return {op.Squeeze(out[1], {3}), out[0]};  // y [batch, seq, C], h [batch, C, N]
}

MixerResult MambaMixer::mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.size() == 2 && ctx.token_mask, "a Mamba mixer takes {conv_state, recurrent_state} and a token mask");
  auto s = enter(op);
  const int64_t c = o_.intermediate_size, n = o_.state_size;
  Value* mask = op.Unsqueeze(ctx.token_mask, {2});  // [batch, seq, 1]
  std::vector<Value*> xz = op.Split(in_proj->forward(op, op.Mul(x, mask)), {c, c}, {.axis = 2});

  auto [conv, conv_state] = causal_conv1d(op, xz[0], past[0], conv_weight->value(op),
                                          conv_bias ? conv_bias->value(op) : nullptr, c, o_.conv_kernel, o_.hidden_act);
  Value* u = op.Mul(conv, mask);  // [batch, seq, C]

  std::vector<Value*> p = op.Split(x_proj->forward(op, u), {o_.time_step_rank, n, n}, {.axis = 2});
  if (dt_layernorm) {
    p[0] = dt_layernorm->forward(op, p[0]);
    p[1] = b_layernorm->forward(op, p[1]);
    p[2] = c_layernorm->forward(op, p[2]);
  }
  Value* dt = op.Softplus(dt_proj->forward(op, p[0]));  // [batch, seq, C]

  auto [y, h] = scan(op, to_float(op, past[1]), to_float(op, u), to_float(op, dt), to_float(op, p[1]), to_float(op, p[2]));
  y = op.Add(y, op.Mul(to_float(op, u), to_float(op, D->value(op))));
  Value* z = to_float(op, xz[1]);
  y = op.Mul(y, op.Mul(z, op.Sigmoid(z)));
  if (o_.dtype != DataType::FLOAT) {
    y = op.Cast(y, {.to = o_.dtype});
    h = op.Cast(h, {.to = o_.dtype});
  }
  return {out_proj->forward(op, y), {conv_state, h}};
}

}  // namespace mobius
