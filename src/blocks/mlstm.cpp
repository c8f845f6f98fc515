#include "blocks/mlstm.h"

#include <cmath>

#include "blocks/mamba.h"
#include "blocks/scan_body.h"
#include "util/error.h"

namespace mobius {

namespace {

// cap * tanh(x / cap) (xLSTM's soft_cap)
Value* mlstm_soft_cap(Ops& op, Value* x, double cap) { return op.Mul(op.Tanh(op.Div(x, cap)), cap); }

struct MLstmScanResult {
  Value* h;  // [batch, seq, H, Dv]
  Value *C, *n, *m;
};

// The recurrence over the tokens (float32): q (already scaled by Dqk^-0.5), k [batch, seq, H, Dqk],
// v [batch, seq, H, Dv], i and log f [batch, seq, H]; from C [batch, H, Dqk, Dv], n [batch, H, Dqk],
// m [batch, H, 1]. The body holds no constant (a body's constants would take names its outer graph
// uses, const_0 ...): n and m are carried as [batch, H, Dqk, 1] and [batch, H, 1, 1], and the
// division by max(|q . n|, exp(-m)) + eps is done after the Scan, on its per-token outputs.
MLstmScanResult mlstm_recurrence(Ops& op, const MLstmOptions& o, Value* q, Value* k, Value* v, Value* i,
                                 Value* log_f, Value* C0, Value* n0, Value* m0) {
  const int64_t h = o.num_heads, dk = o.qk_dim / o.num_heads, dv = o.v_dim / o.num_heads;
  // scanned along axis 1: q_t as a row [batch, H, 1, Dqk], k_t as a column [batch, H, Dqk, 1], v_t as
  // a row [batch, H, 1, Dv], i_t and log f_t [batch, H, 1, 1]
  ScanBody body(op);
  Ops& bo = body.op();
  Value* c_in = body.input("C", {"batch_size", h, dk, dv});
  Value* n_in = body.input("n", {"batch_size", h, dk, 1});
  Value* m_in = body.input("m", {"batch_size", h, 1, 1});
  Value* q_t = body.input("q", {"batch_size", h, 1, dk});
  Value* k_t = body.input("k", {"batch_size", h, dk, 1});
  Value* v_t = body.input("v", {"batch_size", h, 1, dv});
  Value* i_t = body.input("i", {"batch_size", h, 1, 1});
  Value* f_t = body.input("log_f", {"batch_size", h, 1, 1});
  Value* decayed = bo.Add(f_t, m_in);
  Value* m_new = bo.Max(decayed, i_t);
  Value* f_act = bo.Exp(bo.Sub(decayed, m_new));  // [batch, H, 1, 1]
  Value* i_act = bo.Exp(bo.Sub(i_t, m_new));
  Value* c_new = bo.Add(bo.Mul(f_act, c_in), bo.Mul(i_act, bo.MatMul(k_t, v_t)));  // [batch, H, Dqk, Dv]
  Value* n_new = bo.Add(bo.Mul(f_act, n_in), bo.Mul(i_act, k_t));                  // [batch, H, Dqk, 1]
  body.output(c_new, "C_out", {"batch_size", h, dk, dv});
  body.output(n_new, "n_out", {"batch_size", h, dk, 1});
  body.output(m_new, "m_out", {"batch_size", h, 1, 1});
  body.output(bo.MatMul(q_t, c_new), "num", {"batch_size", h, 1, dv});  // q . C'
  body.output(bo.MatMul(q_t, n_new), "qn", {"batch_size", h, 1, 1});    // q . n'
  body.output(bo.Identity(m_new), "m_t", {"batch_size", h, 1, 1});

  std::vector<Value*> out = op.Scan({C0, op.Unsqueeze(n0, {3}), op.Unsqueeze(m0, {3}), op.Unsqueeze(q, {3}),
                                     op.Unsqueeze(k, {4}), op.Unsqueeze(v, {3}), op.Unsqueeze(i, {3, 4}),
                                     op.Unsqueeze(log_f, {3, 4})},
                                    body.graph(),
                                    {.num_scan_inputs = 5, .scan_input_axes = {1, 1, 1, 1, 1},
                                     .scan_output_axes = {1, 1, 1}});
  // per token [batch, seq, H, 1, *]: h = num / (max(|qn|, exp(-m)) + eps)
  Value* denom = op.Add(op.Max(op.Abs(out[4]), op.Exp(op.Neg(out[5]))), o.eps);
  return {op.Squeeze(op.Div(out[3], denom), {3}), out[0], op.Squeeze(out[1], {3}), op.Squeeze(out[2], {3})};
}

}  // namespace

MLstmLayer::MLstmLayer(const MLstmOptions& o) : o_(o) {
  if (o.hidden_size < 1 || o.num_heads < 1 || o.qk_dim < o.num_heads || o.v_dim < o.num_heads ||
      o.qk_dim % o.num_heads != 0 || o.v_dim % o.num_heads != 0)
    throw Error("mLSTM layer: num_heads " + std::to_string(o.num_heads) + " must divide the query/key width " +
                std::to_string(o.qk_dim) + " and the value width " + std::to_string(o.v_dim));
  const int64_t hs = o.hidden_size;
  auto linear = [&](const char* name, int64_t out, bool bias) {
    return child<Linear>(name, LinearOptions{.in_features = hs, .out_features = out, .bias = bias, .dtype = o.dtype});
  };
  q = linear("q", o.qk_dim, o.bias);
  k = linear("k", o.qk_dim, o.bias);
  v = linear("v", o.v_dim, o.bias);
  ogate_preact = linear("ogate_preact", o.v_dim, o.bias);
  igate_preact = linear("igate_preact", o.num_heads, true);
  fgate_preact = linear("fgate_preact", o.num_heads, true);
  norm_weight = param("multihead_norm.weight", {o.v_dim}, o.dtype);
  if (o.bias) norm_bias = param("multihead_norm.bias", {o.v_dim}, o.dtype);
  out_proj = child<Linear>("out_proj",
                           LinearOptions{.in_features = o.v_dim, .out_features = hs, .bias = o.bias, .dtype = o.dtype});
}

LayerStates MLstmLayer::states() const {
  const int64_t h = o_.num_heads, dk = o_.qk_dim / h, dv = o_.v_dim / h;
  return {{.kind = StateKind::recurrent,
           .tensors = {{.name = "C", .shape = {"batch_size", h, dk, dv}, .dtype = DataType::FLOAT},
                       {.name = "n", .shape = {"batch_size", h, dk}, .dtype = DataType::FLOAT},
                       {.name = "m", .shape = {"batch_size", h, 1}, .dtype = DataType::FLOAT}}}};
}

MixerResult MLstmLayer::mix(Ops& op, Value* x, const AttentionContext&, std::span<Value* const> past) const {
  auto s = enter(op);
  const int64_t h = o_.num_heads, dk = o_.qk_dim / h, dv = o_.v_dim / h;
  auto heads = [&](const Linear* proj, int64_t dim) {
    return to_float(op, op.Reshape(proj->forward(op, x), {0, 0, h, dim}));
  };
  Value* query = op.Mul(heads(q, dk), std::pow(static_cast<double>(dk), -0.5));
  Value* i_preact = to_float(op, mlstm_soft_cap(op, igate_preact->forward(op, x), o_.gate_soft_cap));
  Value* f_preact = to_float(op, mlstm_soft_cap(op, fgate_preact->forward(op, x), o_.gate_soft_cap));
  Value* log_f = op.Neg(op.Softplus(op.Neg(f_preact)));  // logsigmoid
  MLstmScanResult r =
      mlstm_recurrence(op, o_, query, heads(k, dk), heads(v, dv), i_preact, log_f, past[0], past[1], past[2]);
  Value* hidden = o_.dtype == DataType::FLOAT ? r.h : op.Cast(r.h, {.to = o_.dtype});
  // multihead_norm: each head's LayerNorm without affine, then the weight (and bias) over H * Dv
  Value* ones = op.builder().constant_float(std::vector<float>(static_cast<size_t>(dv), 1.0f), {dv}, o_.dtype);
  Value* normed = op.Reshape(op.LayerNormalization(hidden, ones, nullptr, {.axis = -1, .epsilon = o_.norm_eps}),
                             {0, 0, o_.v_dim});
  normed = op.Mul(normed, norm_weight->value(op));
  if (norm_bias) normed = op.Add(normed, norm_bias->value(op));
  return {out_proj->forward(op, op.Mul(op.Sigmoid(ogate_preact->forward(op, x)), normed)), {r.C, r.n, r.m}};
}

}  // namespace mobius
