#include "blocks/mamba2.h"

#include <limits>

#include "blocks/mamba.h"
#include "blocks/spec_check.h"
#include "util/error.h"

namespace mobius {


Mamba2Mixer::Mamba2Mixer(const Mamba2Options& o) : o_(o) {
  check_mamba2(o);
  const int64_t h = o.num_heads, cd = o.conv_dim();
  in_proj = child<Linear>("in_proj", LinearOptions{.in_features = o.hidden_size,
                                                   .out_features = o.intermediate_size() + cd + h,
                                                   .bias = o.use_bias, .dtype = o.dtype});
  conv_weight = param("conv1d.weight", {cd, 1, o.conv_kernel}, o.dtype);
  if (o.use_conv_bias) conv_bias = param("conv1d.bias", {cd}, o.dtype);
  dt_bias = param("dt_bias", {h}, o.dtype);
  A_log = param("A_log", {h}, o.dtype);
  if (o.gate != Mamba2Gate::gate_only) norm_weight = param("norm.weight", {o.intermediate_size()}, o.dtype);
  D = param("D", {h}, o.dtype);
  out_proj = child<Linear>("out_proj", LinearOptions{.in_features = o.intermediate_size(), .out_features = o.hidden_size,
                                                     .bias = o.out_proj_bias.value_or(o.use_bias), .dtype = o.dtype});
}

LayerStates Mamba2Mixer::states() const {
  return {{.kind = StateKind::recurrent,
          .tensors = {{.name = "conv_state", .shape = {"batch_size", o_.conv_dim(), o_.conv_kernel - 1}},
                      {.name = "recurrent_state", .shape = {"batch_size", o_.num_heads, o_.head_dim, o_.state_size}}}}};
}

MixerResult Mamba2Mixer::mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.size() == 2 && ctx.token_mask, "a Mamba-2 mixer takes {conv_state, recurrent_state} and a token mask");
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  const int64_t H = o_.num_heads, P = o_.head_dim, G = o_.n_groups, N = o_.state_size, I = o_.intermediate_size();
  Value* mask = op.Unsqueeze(ctx.token_mask, {2});  // [batch, seq, 1]
  Value* projected = in_proj->forward(op, op.Mul(x, mask));
  if (!o_.projection_multipliers.empty()) {  // [z | x | B | C | dt] each times its multiplier
    std::vector<float> scale;
    const int64_t sizes[] = {I, I, G * N, G * N, H};
    for (size_t part = 0; part < 5; ++part)
      scale.insert(scale.end(), static_cast<size_t>(sizes[part]), o_.projection_multipliers.at(part));
    projected = op.Mul(projected, b.constant_float(scale, {static_cast<int64_t>(scale.size())}, o_.dtype));
  }
  std::vector<Value*> zxd = op.Split(projected, {I, o_.conv_dim(), H}, {.axis = 2});
  auto [conv, conv_state] = causal_conv1d(op, zxd[1], past[0], conv_weight->value(op),
                                          conv_bias ? conv_bias->value(op) : nullptr, o_.conv_dim(), o_.conv_kernel,
                                          o_.hidden_act);
  std::vector<Value*> xbc = op.Split(to_float(op, op.Mul(conv, mask)), {I, G * N, G * N}, {.axis = 2});

  // float32 from here, heads first: x [batch, H, seq, P], B and C [batch, H, seq, N]
  Value* xh = op.Reshape(xbc[0], std::vector<int64_t>{0, 0, H, P});  // [batch, seq, H, P]
  auto per_head = [&](Value* v) {
    v = op.Reshape(v, std::vector<int64_t>{0, 0, G, N});
    if (G != H) {  // head h reads group h / (H / G) (repeat_interleave)
      std::vector<int64_t> group(static_cast<size_t>(H));
      for (int64_t i = 0; i < H; ++i) group[static_cast<size_t>(i)] = i / (H / G);
      v = op.Gather(v, b.ints(group), {.axis = 2});
    }
    return op.Transpose(v, {.perm = {0, 2, 1, 3}});
  };
  Value* bh = per_head(xbc[1]);
  Value* ch = per_head(xbc[2]);
  Value* dt = op.Softplus(op.Add(to_float(op, zxd[2]), to_float(op, dt_bias->value(op))));  // [batch, seq, H]
  if (o_.time_step_min > 0.0f) dt = op.Max(dt, o_.time_step_min);
  if (o_.time_step_max < std::numeric_limits<float>::infinity()) dt = op.Min(dt, o_.time_step_max);
  Value* dt_h = op.Transpose(dt, {.perm = {0, 2, 1}});                                      // [batch, H, seq]
  Value* a = op.Mul(dt_h, op.Unsqueeze(op.Neg(op.Exp(to_float(op, A_log->value(op)))), {1}));  // dt * A
  Value* xdt = op.Mul(op.Transpose(xh, {.perm = {0, 2, 1, 3}}), op.Unsqueeze(dt_h, {3}));  // dt x [batch, H, seq, P]
  Value* h0 = to_float(op, past[1]);                                                         // [batch, H, P, N]

  // the step's tokens zero-padded to nc chunks of Q = min(chunk_size, seq) along axis 2, then
  // [batch, H, nc, Q, ...]: a step no longer than a chunk (a decode step's one token) is one chunk of
  // its own length, not chunk_size padded tokens (the chunked form is exact for any chunk length)
  Value* seq = op.Shape(x, {.start = 1, .end = 2});                    // [1]
  Value* q = op.Min(seq, b.ints({o_.chunk_size}));                     // [1]: Q
  Value* padded = op.Mul(op.Div(op.Sub(op.Add(seq, q), b.ints({1})), q), q);  // nc * Q
  Value* pad = op.Sub(padded, seq);
  auto chunks = [&](Value* v, std::vector<int64_t> tail) {
    Value* zeros_shape = op.Concat({op.Shape(v, {.start = 0, .end = 2}), pad, op.Shape(v, {.start = 3})}, {.axis = 0});
    v = op.Concat({v, op.Expand(b.constant_f32({0.0f}, {}), zeros_shape)}, {.axis = 2});
    return op.Reshape(v, op.Concat({b.ints({0, 0, -1}), q, b.ints(tail)}, {.axis = 0}));
  };
  Value* ac = chunks(a, {});         // [batch, H, nc, Q]
  Value* xc = chunks(xdt, {P});      // [batch, H, nc, Q, P]
  Value* bc = chunks(bh, {N});
  Value* cc = chunks(ch, {N});
  Value* cum = op.CumSum(ac, b.scalar_i64(3));  // S within each chunk

  // masked exp(row - column) of a cumulative sum's last axis: [..., n] -> [..., n, n]
  auto segment_decay = [&](Value* s, Value* n) {
    Value* steps = op.Range(0, n, 1);
    Value* causal = op.GreaterOrEqual(op.Unsqueeze(steps, {1}), op.Unsqueeze(steps, {0}));
    Value* seg = op.Sub(op.Unsqueeze(s, {-1}), op.Unsqueeze(s, {-2}));
    return op.Exp(op.Where(causal, seg, -std::numeric_limits<double>::infinity()));
  };
  Value* scores = op.Mul(op.MatMul(cc, op.Transpose(bc, {.perm = {0, 1, 2, 4, 3}})),
                         segment_decay(cum, op.Squeeze(q, {0})));                      // [batch, H, nc, Q, Q]
  Value* y = op.MatMul(scores, xc);                                                   // [batch, H, nc, Q, P]
  Value* last = op.Slice(cum, {-1}, {std::numeric_limits<int64_t>::max()}, {3});      // [batch, H, nc, 1]
  Value* own = op.MatMul(op.Transpose(op.Mul(xc, op.Unsqueeze(op.Exp(op.Sub(last, cum)), {4})),
                                      {.perm = {0, 1, 2, 4, 3}}),
                         bc);                                                         // [batch, H, nc, P, N]
  // the states at the chunk starts (and after the last): from h0 and the chunks' own states
  Value* totals = op.Squeeze(last, {3});                                              // [batch, H, nc]
  Value* starts = op.Concat({op.Mul(op.Slice(totals, {0}, {1}, {2}), 0.0), totals}, {.axis = 2});
  Value* chunk_decay = segment_decay(op.CumSum(starts, b.scalar_i64(2)),
                                     op.Squeeze(op.Shape(starts, {.start = 2, .end = 3}), {0}));  // [batch, H, nc + 1, nc + 1]
  Value* carried = op.MatMul(chunk_decay, op.Reshape(op.Concat({op.Unsqueeze(h0, {2}), own}, {.axis = 2}),
                                                     std::vector<int64_t>{0, 0, 0, P * N}));
  carried = op.Reshape(carried, std::vector<int64_t>{0, 0, 0, P, N});                 // [batch, H, nc + 1, P, N]
  Value* h = op.Squeeze(op.Slice(carried, {-1}, {std::numeric_limits<int64_t>::max()}, {2}), {2});  // [batch, H, P, N]
  Value* at_start = op.Slice(carried, {0}, {-1}, {2});                                // [batch, H, nc, P, N]
  y = op.Add(y, op.Mul(op.MatMul(cc, op.Transpose(at_start, {.perm = {0, 1, 2, 4, 3}})), op.Unsqueeze(op.Exp(cum), {4})));
  y = op.Slice(op.Reshape(y, std::vector<int64_t>{0, 0, -1, P}), op.builder().ints({0}), seq, b.ints({2}));  // [batch, H, seq, P]

  y = op.Add(op.Transpose(y, {.perm = {0, 2, 1, 3}}), op.Mul(xh, op.Unsqueeze(to_float(op, D->value(op)), {1})));
  y = op.Reshape(y, std::vector<int64_t>{0, 0, I});  // [batch, seq, I]
  // the gate silu(z) and the norm per group of I / G channels (Mamba2Gate)
  Value* z = to_float(op, zxd[0]);
  Value* gate = op.Mul(z, op.Sigmoid(z));
  auto group_norm = [&](Value* v) {
    v = op.Reshape(v, std::vector<int64_t>{0, 0, G, I / G});
    v = op.RMSNormalization(v, b.constant_f32(std::vector<float>(static_cast<size_t>(I / G), 1.0f), {I / G}),
                            {.axis = -1, .epsilon = o_.layer_norm_epsilon});
    return op.Reshape(v, std::vector<int64_t>{0, 0, I});
  };
  if (o_.gate == Mamba2Gate::norm_after_gate)
    y = group_norm(op.Mul(y, gate));
  else if (o_.gate == Mamba2Gate::norm_before_gate)  // FalconH1RMSNormGated: the weight in float32
    y = op.Mul(op.Mul(group_norm(y), to_float(op, norm_weight->value(op))), gate);
  else
    y = op.Mul(y, gate);
  if (o_.dtype != DataType::FLOAT) {
    y = op.Cast(y, {.to = o_.dtype});
    h = op.Cast(h, {.to = o_.dtype});
  }
  // MambaRMSNormGated: back to the model dtype, then times norm.weight
  if (o_.gate == Mamba2Gate::norm_after_gate) y = op.Mul(y, norm_weight->value(op));
  return {out_proj->forward(op, y), {conv_state, h}};
}

}  // namespace mobius
