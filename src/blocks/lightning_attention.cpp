#include "blocks/lightning_attention.h"

#include <cmath>

#include "blocks/activation.h"
#include "blocks/mamba.h"
#include "util/error.h"

namespace mobius {

std::vector<float> lightning_slopes(const LightningAttentionOptions& o) {
  // as transformers computes them: base ** (h + 1) a float32 tensor, times the layer factor (a
  // Python float) in float32
  const double base = 1.0 / std::pow(2.0, 8.0 / static_cast<double>(o.num_heads));
  const double layers = static_cast<double>(o.num_hidden_layers);
  const double factor = 1.0 - static_cast<double>(o.layer_index) / (layers - 1.0 + 1e-5) + 1e-5;
  std::vector<float> slopes;
  for (int64_t h = 0; h < o.num_heads; ++h)
    slopes.push_back(static_cast<float>(std::pow(base, static_cast<double>(h + 1))) * static_cast<float>(factor));
  return slopes;
}

LightningAttention::LightningAttention(const LightningAttentionOptions& o) : o_(o) {
  MOBIUS_ASSERT(o.hidden_size > 0 && o.num_heads > 0 && o.head_dim > 0 && o.layer_index >= 0 &&
                    o.layer_index < o.num_hidden_layers,
                "lightning attention sizes");
  const int64_t inner = o.num_heads * o.head_dim;
  auto linear = [&](const char* name, int64_t in, int64_t out) {
    return child<Linear>(name, LinearOptions{.in_features = in, .out_features = out, .dtype = o.dtype});
  };
  qkv_proj = linear("qkv_proj", o.hidden_size, 3 * inner);
  out_proj = linear("out_proj", inner, o.hidden_size);
  output_gate = linear("output_gate", o.hidden_size, inner);
  norm = adopt("norm", make_norm(NormOptions{.dim = inner, .eps = 1e-6f, .dtype = o.dtype}));
}

LayerStates LightningAttention::states() const {
  return {{.kind = StateKind::recurrent,
           .tensors = {{.name = "linear_cache", .shape = {"batch_size", o_.num_heads, o_.head_dim, o_.head_dim}}}}};
}

MixerResult LightningAttention::mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.size() == 1 && ctx.token_mask,
                "a lightning attention mixer takes {linear_cache} and a token mask");
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  const int64_t h = o_.num_heads, d = o_.head_dim;
  const std::vector<int64_t> transposed = {0, 1, 3, 2};

  // q, k, v [batch, H, T, D] in float32: each head's [q | k | v] of act(qkv_proj(x)), padding zeroed
  Value* qkv = op.Mul(activation(op, o_.hidden_act, qkv_proj->forward(op, x)), op.Unsqueeze(ctx.token_mask, {2}));
  qkv = op.Transpose(op.Reshape(to_float(op, qkv), {0, 0, h, 3 * d}), {.perm = {0, 2, 1, 3}});
  std::vector<Value*> parts = op.Split(qkv, {d, d, d}, {.axis = 3});
  Value *q = parts[0], *k = parts[1], *v = parts[2];

  // the decays of the step's T tokens, r = exp(-slope) per head: D [H, T, T], q_decay and k_decay
  // [H, T, 1], r^T [H, 1, 1]
  std::vector<float> neg_slopes = lightning_slopes(o_);
  for (float& slope : neg_slopes) slope = -slope;
  Value* neg_slope = b.constant_f32(neg_slopes, {h, 1, 1});
  Value* n = op.Squeeze(op.Shape(x, {.start = 1, .end = 2}), {0});
  Value* pos = op.Cast(op.Range(0, n, 1), {.to = DataType::FLOAT});  // [T]
  Value* len = op.Cast(n, {.to = DataType::FLOAT});
  Value* row = op.Unsqueeze(pos, {1});  // [T, 1]
  Value* diff = op.Sub(row, op.Unsqueeze(pos, {0}));  // i - j [T, T]
  Value* diagonal_decay = op.Where(op.GreaterOrEqual(diff, 0.0f), op.Exp(op.Mul(neg_slope, diff)), 0.0f);
  Value* query_decay = op.Exp(op.Mul(neg_slope, op.Add(row, 1.0f)));
  Value* key_decay = op.Exp(op.Mul(neg_slope, op.Sub(op.Sub(len, 1.0f), row)));
  Value* block_decay = op.Exp(op.Mul(neg_slope, len));

  Value* s0 = to_float(op, past[0]);  // [batch, H, D, D]
  Value* intra = op.MatMul(op.Mul(op.MatMul(q, op.Transpose(k, {.perm = transposed})), diagonal_decay), v);
  Value* inter = op.MatMul(op.Mul(q, query_decay), s0);
  Value* o = op.Add(inter, intra);  // [batch, H, T, D]
  Value* state =
      op.Add(op.Mul(s0, block_decay), op.MatMul(op.Transpose(op.Mul(k, key_decay), {.perm = transposed}), v));

  auto to_model = [&](Value* t) { return o_.dtype == DataType::FLOAT ? t : op.Cast(t, {.to = o_.dtype}); };
  o = to_model(op.Reshape(op.Transpose(o, {.perm = {0, 2, 1, 3}}), {0, 0, h * d}));
  Value* y = op.Mul(op.Sigmoid(output_gate->forward(op, x)), norm->forward(op, o));
  return {out_proj->forward(op, y), {to_model(state)}};
}

}  // namespace mobius
