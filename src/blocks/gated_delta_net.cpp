#include "blocks/gated_delta_net.h"

#include <cmath>

#include "blocks/mamba.h"
#include "blocks/scan_body.h"
#include "blocks/spec_check.h"
#include "util/error.h"

namespace mobius {

GatedDeltaNetMixer::GatedDeltaNetMixer(const GatedDeltaNetOptions& o) : o_(o) {
  check_gated_delta_net(o);
  const int64_t hv = o.num_value_heads;
  const int64_t h = o.hidden_size;
  auto linear = [&](const char* name, int64_t out, int64_t in = 0) {
    return child<Linear>(name, LinearOptions{.in_features = in ? in : h, .out_features = out, .dtype = o.dtype});
  };
  const bool kimi = o.projections == GatedDeltaNetProjections::kimi;
  const bool bailing = o.projections == GatedDeltaNetProjections::bailing;
  const bool per_channel = kimi || bailing;  // Kimi Delta Attention
  const bool unfused = o.projections == GatedDeltaNetProjections::unfused || per_channel;  // the names they share
  MOBIUS_ASSERT(!per_channel || (o.num_key_heads == hv && o.key_head_dim == o.value_head_dim),
                "Kimi Delta Attention has as many key as value heads, of one head size");
  MOBIUS_ASSERT(per_channel || !o.forget_lower_bound, "a forget gate's lower bound is Kimi Delta Attention's");
  if (bailing) {
    q_proj = linear("q_proj", o.key_dim());
    k_proj = linear("k_proj", o.key_dim());
    v_proj = linear("v_proj", o.value_dim());
    f_proj = linear("f_proj", o.key_dim());
    b_proj = linear("b_proj", hv);
    g_proj = linear("g_proj", o.value_dim());
  } else if (kimi) {
    q_proj = linear("q_proj", o.key_dim());
    k_proj = linear("k_proj", o.key_dim());
    v_proj = linear("v_proj", o.value_dim());
    f_a_proj = linear("f_a_proj", o.key_head_dim);
    f_b_proj = linear("f_b_proj", o.key_dim(), o.key_head_dim);
    b_proj = linear("b_proj", hv);
    g_a_proj = linear("g_a_proj", o.value_head_dim);
    g_b_proj = linear("g_b_proj", o.value_dim(), o.value_head_dim);
  } else if (o.projections == GatedDeltaNetProjections::per_key_head) {
    in_proj_qkvz = linear("in_proj_qkvz", 2 * o.key_dim() + 2 * o.value_dim());
    in_proj_ba = linear("in_proj_ba", 2 * hv);
  } else if (o.projections == GatedDeltaNetProjections::separate) {
    in_proj_qkv = linear("in_proj_qkv", o.conv_dim());
    in_proj_z = linear("in_proj_z", o.value_dim());
    in_proj_b = linear("in_proj_b", hv);
    in_proj_a = linear("in_proj_a", hv);
  } else {
    q_proj = linear("q_proj", o.key_dim());
    k_proj = linear("k_proj", o.key_dim());
    v_proj = linear("v_proj", o.value_dim());
    a_proj = linear("a_proj", hv);
    b_proj = linear("b_proj", hv);
    g_proj = linear("g_proj", o.value_dim());
  }
  if (unfused) {
    q_conv_weight = param("q_conv1d.weight", {o.key_dim(), 1, o.conv_kernel}, o.dtype);
    k_conv_weight = param("k_conv1d.weight", {o.key_dim(), 1, o.conv_kernel}, o.dtype);
    v_conv_weight = param("v_conv1d.weight", {o.value_dim(), 1, o.conv_kernel}, o.dtype);
  } else {
    conv_weight = param("conv1d.weight", {o.conv_dim(), 1, o.conv_kernel}, o.dtype);
  }
  dt_bias = per_channel ? param("dt_bias", {o.key_dim()}, o.dtype) : param("dt_bias", {hv}, o.dtype);
  A_log = kimi ? param("A_log", {1, 1, hv, 1}, o.dtype) : param("A_log", {hv}, o.dtype);
  norm_weight = param(unfused ? "o_norm.weight" : "norm.weight", {o.value_head_dim}, o.dtype);
  out_proj = child<Linear>(bailing ? "dense" : unfused ? "o_proj" : "out_proj",
                           LinearOptions{.in_features = o.value_dim(), .out_features = o.hidden_size, .dtype = o.dtype});
}

LayerStates GatedDeltaNetMixer::states() const {
  return {{.kind = StateKind::recurrent,
           .tensors = {{.name = "conv_state", .shape = {"batch_size", o_.conv_dim(), o_.conv_kernel - 1}},
                       {.name = "recurrent_state",
                        .shape = {"batch_size", o_.num_value_heads, o_.key_head_dim, o_.value_head_dim}}}}};
}

std::pair<Value*, Value*> GatedDeltaNetMixer::scan(Ops& op, Value* s0, Value* q, Value* k, Value* v, Value* decay,
                                                   Value* beta) const {
  const int64_t hv = o_.num_value_heads, dk = o_.key_head_dim, dv = o_.value_head_dim;
  // scanned along axis 1: q_t, k_t as rows [batch, Hv, 1, Dk], k_t as a column [batch, Hv, Dk, 1],
  // v_t [batch, Hv, 1, Dv], exp(g_t) [batch, Hv, 1, 1] (per key channel: [batch, Hv, Dk, 1], a
  // rate per row of S) and beta_t [batch, Hv, 1, 1]
  const bool per_channel =
      o_.projections == GatedDeltaNetProjections::kimi || o_.projections == GatedDeltaNetProjections::bailing;
  Value* rows_q = op.Unsqueeze(q, {3});
  Value* rows_k = op.Unsqueeze(k, {3});
  Value* cols_k = op.Unsqueeze(k, {4});
  Value* rows_v = op.Unsqueeze(v, {3});
  Value* decays = per_channel ? op.Unsqueeze(decay, {4}) : op.Unsqueeze(decay, {3, 4});
  Value* betas = op.Unsqueeze(beta, {3, 4});

  ScanBody body(op);
  Ops& bo = body.op();
  Value* s_in = body.input("S", {"batch_size", hv, dk, dv});
  Value* q_t = body.input("q", {"batch_size", hv, 1, dk});
  Value* k_row = body.input("k_row", {"batch_size", hv, 1, dk});
  Value* k_col = body.input("k_col", {"batch_size", hv, dk, 1});
  Value* v_t = body.input("v", {"batch_size", hv, 1, dv});
  Value* decay_t = body.input("decay", {"batch_size", hv, per_channel ? dk : 1, 1});
  Value* beta_t = body.input("beta", {"batch_size", hv, 1, 1});
  Value* s = bo.Mul(s_in, decay_t);
  Value* delta = bo.Mul(bo.Sub(v_t, bo.MatMul(k_row, s)), beta_t);  // [batch, Hv, 1, Dv]
  s = bo.Add(s, bo.MatMul(k_col, delta));
  Value* o = bo.MatMul(q_t, s);  // [batch, Hv, 1, Dv]
  body.output(s, "S_out", {"batch_size", hv, dk, dv});
  body.output(o, "o", {"batch_size", hv, 1, dv});

  std::vector<Value*> out =
      op.Scan({s0, rows_q, rows_k, cols_k, rows_v, decays, betas}, body.graph(),
              {.num_scan_inputs = 6, .scan_input_axes = {1, 1, 1, 1, 1, 1}, .scan_output_axes = {1}});
  return {op.Squeeze(out[1], {3}), out[0]};  // o [batch, seq, Hv, Dv], S [batch, Hv, Dk, Dv]
}

GatedDeltaNetMixer::Projected GatedDeltaNetMixer::project(Ops& op, Value* x) const {
  const int64_t hk = o_.num_key_heads, hv = o_.num_value_heads, dk = o_.key_head_dim, dv = o_.value_head_dim;
  const int64_t r = hv / hk;
  if (f_proj)  // bailing
    return {op.Concat({q_proj->forward(op, x), k_proj->forward(op, x), v_proj->forward(op, x)}, {.axis = 2}),
            op.Reshape(g_proj->forward(op, x), {0, 0, hv, dv}), b_proj->forward(op, x), f_proj->forward(op, x)};
  if (f_a_proj)  // kimi
    return {op.Concat({q_proj->forward(op, x), k_proj->forward(op, x), v_proj->forward(op, x)}, {.axis = 2}),
            op.Reshape(g_b_proj->forward(op, g_a_proj->forward(op, x)), {0, 0, hv, dv}), b_proj->forward(op, x),
            f_b_proj->forward(op, f_a_proj->forward(op, x))};
  if (in_proj_qkv)
    return {in_proj_qkv->forward(op, x), op.Reshape(in_proj_z->forward(op, x), {0, 0, hv, dv}),
            in_proj_b->forward(op, x), in_proj_a->forward(op, x)};
  if (q_proj)
    return {op.Concat({q_proj->forward(op, x), k_proj->forward(op, x), v_proj->forward(op, x)}, {.axis = 2}),
            op.Reshape(g_proj->forward(op, x), {0, 0, hv, dv}), b_proj->forward(op, x), a_proj->forward(op, x)};
  // fix_query_key_value_ordering: per key head [q | k | v | z] and [b | a]
  std::vector<Value*> qkvz = op.Split(op.Reshape(in_proj_qkvz->forward(op, x), {0, 0, hk, 2 * dk + 2 * r * dv}),
                                      {dk, dk, r * dv, r * dv}, {.axis = 3});
  std::vector<Value*> ba = op.Split(op.Reshape(in_proj_ba->forward(op, x), {0, 0, hk, 2 * r}), {r, r}, {.axis = 3});
  Value* qkv = op.Concat({op.Reshape(qkvz[0], {0, 0, -1}), op.Reshape(qkvz[1], {0, 0, -1}),
                          op.Reshape(qkvz[2], {0, 0, -1})},
                         {.axis = 2});
  return {qkv, op.Reshape(qkvz[3], {0, 0, hv, dv}), op.Reshape(ba[0], {0, 0, hv}), op.Reshape(ba[1], {0, 0, hv})};
}

MixerResult GatedDeltaNetMixer::mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.size() == 2 && ctx.token_mask,
                "a gated DeltaNet mixer takes {conv_state, recurrent_state} and a token mask");
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  const int64_t hk = o_.num_key_heads, hv = o_.num_value_heads, dk = o_.key_head_dim, dv = o_.value_head_dim;
  const int64_t r = hv / hk;
  Value* mask = op.Unsqueeze(ctx.token_mask, {2});  // [batch, seq, 1]
  Projected p = project(op, op.Mul(x, mask));
  Value* weight = conv_weight ? conv_weight->value(op)
                              : op.Concat({q_conv_weight->value(op), k_conv_weight->value(op), v_conv_weight->value(op)},
                                          {.axis = 0});
  auto [conv, conv_state] = causal_conv1d(op, p.qkv, past[0], weight, nullptr, o_.conv_dim(), o_.conv_kernel, o_.hidden_act);
  std::vector<Value*> qkv = op.Split(to_float(op, conv), {o_.key_dim(), o_.key_dim(), o_.value_dim()}, {.axis = 2});

  // float32 from here; value head h reads key head h / R (repeat_interleave)
  auto key_heads = [&](Value* t) {
    t = op.Reshape(t, {0, 0, hk, dk});
    if (r > 1) {
      std::vector<int64_t> group(static_cast<size_t>(hv));
      for (int64_t i = 0; i < hv; ++i) group[static_cast<size_t>(i)] = i / r;
      t = op.Gather(t, b.ints(group), {.axis = 2});
    }
    // l2norm: x * rsqrt(sum(x^2) + 1e-6) over the head dim
    return op.Div(t, op.Sqrt(op.Add(op.ReduceSum(op.Mul(t, t), {-1}), 1e-6)));
  };
  Value* q = op.Mul(key_heads(qkv[0]), 1.0 / std::sqrt(static_cast<double>(dk)));
  Value* k = key_heads(qkv[1]);
  Value* v = op.Reshape(qkv[2], {0, 0, hv, dv});
  Value* beta = to_float(op, op.Sigmoid(p.b));  // [batch, seq, Hv]
  if (o_.beta_scale != 1.0f) beta = op.Mul(beta, o_.beta_scale);
  Value* a = op.Add(to_float(op, p.a), to_float(op, dt_bias->value(op)));
  if (f_a_proj || f_proj) a = op.Reshape(a, {0, 0, hv, dk});  // per key channel
  Value* decay = nullptr;                                      // exp(g)
  if (f_proj) {  // bailing: A_log [H], one rate per head
    Value* rate = op.Reshape(op.Exp(to_float(op, A_log->value(op))), {hv, 1});
    decay = op.Exp(o_.forget_lower_bound ? op.Mul(op.Sigmoid(op.Mul(rate, a)), *o_.forget_lower_bound)
                                         : op.Mul(op.Neg(rate), op.Softplus(a)));
  } else {  // A_log [Hv] (kimi: [1, 1, H, 1])
    decay = op.Exp(op.Mul(op.Neg(op.Exp(to_float(op, A_log->value(op)))), op.Softplus(a)));
  }

  auto [o, state] = scan(op, to_float(op, past[1]), q, k, v, decay, beta);
  // the gated RMSNorm per value head of the output in the model dtype, normalized in float32;
  // Qwen3NextRMSNormGated: back to the model dtype times norm.weight, times silu(z) in float32;
  // KimiLinearRMSNormGated: times norm.weight and sigmoid(z) in float32
  auto to_model = [&](Value* t) { return o_.dtype == DataType::FLOAT ? t : op.Cast(t, {.to = o_.dtype}); };
  Value* n = op.RMSNormalization(to_float(op, to_model(o)),
                                 b.constant_f32(std::vector<float>(static_cast<size_t>(dv), 1.0f), {dv}),
                                 {.axis = -1, .epsilon = o_.norm_eps});
  Value* y = nullptr;
  if (o_.output_gate == OutputGate::sigmoid) {
    n = op.Mul(n, to_float(op, norm_weight->value(op)));
    y = to_model(op.Mul(n, op.Sigmoid(to_float(op, p.z))));
  } else {
    n = op.Mul(to_model(n), norm_weight->value(op));
    Value* z = to_float(op, p.z);
    y = to_model(op.Mul(to_float(op, n), op.Mul(z, op.Sigmoid(z))));
  }
  return {out_proj->forward(op, op.Reshape(y, {0, 0, hv * dv})), {conv_state, to_model(state)}};
}

}  // namespace mobius
