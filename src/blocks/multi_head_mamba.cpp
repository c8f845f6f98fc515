#include "blocks/multi_head_mamba.h"

#include "blocks/activation.h"
#include "blocks/mamba.h"
#include "blocks/scan_body.h"
#include "blocks/spec_check.h"
#include "config/hf_config.h"
#include "util/error.h"

namespace mobius {

MultiHeadMambaMixer::MultiHeadMambaMixer(const MultiHeadMambaOptions& o) : o_(o) {
  check_size("hidden_size", o.hidden_size, kMaxHiddenSize);
  check_size("mamba_expand * hidden_size", o.intermediate_size, kMaxFfnSize);
  check_size("n_mamba_heads", o.num_heads, kMaxHeads);
  if (o.intermediate_size % o.num_heads != 0)
    throw FieldError("field 'n_mamba_heads': must divide mamba_expand * hidden_size (" +
                     std::to_string(o.intermediate_size) + ")");
  check_size("mamba_d_state", o.state_size, kMaxHeadDim);
  check_size("mamba_d_conv", o.conv_kernel, kMaxSmallSize, 2);
  check_size("mamba_dt_rank", o.time_step_rank, kMaxHiddenSize);
  if (!is_known_activation(o.hidden_act))
    throw FieldError("field 'hidden_mamba_act': unknown activation '" + o.hidden_act + "'");
  const int64_t c = o.intermediate_size, h = o.num_heads, p = o.head_dim(), n = o.state_size, r = o.time_step_rank;
  in_proj = child<Linear>("in_proj", LinearOptions{.in_features = o.hidden_size, .out_features = 2 * c,
                                                   .bias = o.use_bias, .dtype = o.dtype});
  conv_weight = param("conv1d.weight", {c, 1, o.conv_kernel}, o.dtype);
  if (o.use_conv_bias) conv_bias = param("conv1d.bias", {c}, o.dtype);
  x_proj_weight = param("x_proj_weight", {h, r + 2 * n, p}, o.dtype);
  dt_proj_weight = param("dt_proj_weight", {h, p, r}, o.dtype);
  dt_proj_bias = param("dt_proj_bias", {h, p}, o.dtype);
  A_log = param("A_log", {h, p, n}, o.dtype);
  D = param("D", {h, p}, o.dtype);
  out_proj = child<Linear>("out_proj", LinearOptions{.in_features = c, .out_features = o.hidden_size,
                                                     .bias = o.use_bias, .dtype = o.dtype});
}

LayerStates MultiHeadMambaMixer::states() const {
  return {{.kind = StateKind::recurrent,
           .tensors = {{.name = "conv_state", .shape = {"batch_size", o_.intermediate_size, o_.conv_kernel - 1}},
                       {.name = "recurrent_state",
                        .shape = {"batch_size", o_.num_heads, o_.head_dim(), o_.state_size}}}}};
}

MixerResult MultiHeadMambaMixer::mix(Ops& op, Value* x, const AttentionContext& ctx,
                                     std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.size() == 2 && ctx.token_mask, "a Mamba mixer takes {conv_state, recurrent_state} and a token mask");
  auto s = enter(op);
  const int64_t c = o_.intermediate_size, h = o_.num_heads, p = o_.head_dim(), n = o_.state_size,
                r = o_.time_step_rank;
  Value* mask = op.Unsqueeze(ctx.token_mask, {2});  // [batch, seq, 1]
  // [batch, seq, 2 C] viewed as [batch, seq, C, 2]: xs the first of each pair, z the second
  std::vector<Value*> xz = op.Split(op.Reshape(in_proj->forward(op, op.Mul(x, mask)), {0, 0, c, 2}), {1, 1}, {.axis = 3});
  Value* xs = op.Squeeze(xz[0], {3});
  Value* z = to_float(op, op.Squeeze(xz[1], {3}));

  auto [conv, conv_state] = causal_conv1d(op, xs, past[0], conv_weight->value(op),
                                          conv_bias ? conv_bias->value(op) : nullptr, c, o_.conv_kernel, o_.hidden_act);
  Value* u = op.Mul(conv, mask);                  // [batch, seq, C]
  Value* u_heads = op.Reshape(u, {0, 0, h, p});   // [batch, seq, heads, P]
  // per head: x_proj_weight[h] [R + 2 N, P] @ u_h [P, 1]
  Value* params = op.Squeeze(op.MatMul(x_proj_weight->value(op), op.Unsqueeze(u_heads, {4})), {4});
  std::vector<Value*> dbc = op.Split(params, {r, n, n}, {.axis = 3});  // [batch, seq, heads, R | N | N]
  Value* dt = op.Squeeze(op.MatMul(dt_proj_weight->value(op), op.Unsqueeze(dbc[0], {4})), {4});  // [b, s, heads, P]
  dt = op.Softplus(to_float(op, op.Add(dt, dt_proj_bias->value(op))));

  Value* uf = to_float(op, u_heads);
  Value* a = op.Neg(op.Exp(to_float(op, A_log->value(op))));                            // [heads, P, N]
  Value* dA = op.Exp(op.Mul(op.Unsqueeze(dt, {4}), a));                                 // [b, s, heads, P, N]
  Value* dBu = op.Mul(op.Unsqueeze(op.Mul(dt, uf), {4}), op.Unsqueeze(to_float(op, dbc[1]), {3}));  // [b, s, heads, P, N]
  Value* cs = op.Unsqueeze(to_float(op, dbc[2]), {4});                                 // [b, s, heads, N, 1]

  // body: (state [batch, heads, P, N]; dA_t, dBu_t [batch, heads, P, N], C_t [batch, heads, N, 1])
  //   -> (state, y_t [batch, heads, P, 1])
  ScanBody body(op);
  Ops& bo = body.op();
  Value* s_in = body.input("state", {"batch_size", h, p, n});
  Value* da_t = body.input("dA", {"batch_size", h, p, n});
  Value* dbu_t = body.input("dBu", {"batch_size", h, p, n});
  Value* c_t = body.input("C", {"batch_size", h, n, 1});
  Value* state = bo.Add(bo.Mul(da_t, s_in), dbu_t);
  body.output(state, "state_out", {"batch_size", h, p, n});
  body.output(bo.MatMul(state, c_t), "y", {"batch_size", h, p, 1});
  std::vector<Value*> out = op.Scan({to_float(op, past[1]), dA, dBu, cs}, body.graph(),
                                    {.num_scan_inputs = 3, .scan_input_axes = {1, 1, 1}, .scan_output_axes = {1}});
  Value* y = op.Squeeze(out[1], {4});  // [batch, seq, heads, P]
  y = op.Add(y, op.Mul(uf, to_float(op, D->value(op))));
  y = op.Mul(op.Reshape(y, {0, 0, c}), op.Mul(z, op.Sigmoid(z)));
  Value* last = out[0];
  if (o_.dtype != DataType::FLOAT) {
    y = op.Cast(y, {.to = o_.dtype});
    last = op.Cast(last, {.to = o_.dtype});
  }
  return {out_proj->forward(op, y), {conv_state, last}};
}

}  // namespace mobius
