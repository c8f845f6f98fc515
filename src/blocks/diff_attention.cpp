#include "blocks/diff_attention.h"

#include <cmath>

#include "util/error.h"

namespace mobius {

DifferentialAttention::DifferentialAttention(const DiffAttentionOptions& o) : o_(o) {
  const AttentionOptions& a = o.attention;
  MOBIUS_ASSERT(a.num_key_value_heads % 2 == 0 && a.num_attention_heads % a.num_key_value_heads == 0,
                "differential attention needs an even number of kv heads dividing the heads");
  const int64_t q_dim = a.num_attention_heads * a.head_dim, kv_dim = a.num_key_value_heads * a.head_dim;
  q_proj = child<Linear>(a.names.q_proj, LinearOptions{a.hidden_size, q_dim, a.qkv_bias, a.dtype});
  k_proj = child<Linear>(a.names.k_proj, LinearOptions{a.hidden_size, kv_dim, a.qkv_bias, a.dtype});
  v_proj = child<Linear>(a.names.v_proj, LinearOptions{a.hidden_size, kv_dim, a.qkv_bias, a.dtype});
  o_proj = child<Linear>(a.names.o_proj, LinearOptions{q_dim, a.hidden_size, a.o_bias, a.dtype});
  for (auto [p, name] : {std::pair{&lambda_q1, "lambda_q1"}, {&lambda_k1, "lambda_k1"}, {&lambda_q2, "lambda_q2"},
                         {&lambda_k2, "lambda_k2"}})
    *p = param(name, {a.head_dim}, a.dtype);
  groupnorm = adopt("groupnorm", make_norm({.dim = 2 * a.head_dim, .eps = a.norm_eps, .dtype = a.dtype, .kind = NormKind::RMSNorm,
                           .elementwise_affine = false}));
}

AttentionResult DifferentialAttention::forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                                               Value* past_value) const {
  auto s = enter(op);
  const AttentionOptions& a = o_.attention;
  const int64_t H = a.num_attention_heads, KV = a.num_key_value_heads, d = a.head_dim;
  auto heads = [&](Value* y, int64_t n, bool rope) {  // [batch, seq, n * d] -> [batch, n, seq, d]
    Value* t = op.Transpose(op.Reshape(y, {0, 0, n, d}), {.perm = {0, 2, 1, 3}});
    return rope && ctx.rope.cos ? apply_rope(op, t, ctx.rope) : t;
  };
  Value* q = heads(q_proj->forward(op, x), H, true);
  Value* k = heads(k_proj->forward(op, x), KV, true);
  Value* v = heads(v_proj->forward(op, x), KV, false);
  if (past_key) {
    k = op.Concat({past_key, k}, {.axis = 2});
    v = op.Concat({past_value, v}, {.axis = 2});
  }
  // kv head j holds [v_a | v_b] of kv head j mod KV/2 of each half: [batch, KV, total, 2d]
  Value* va = op.Slice(v, {0}, {KV / 2}, {1});
  Value* vb = op.Slice(v, {KV / 2}, {KV}, {1});
  Value* paired = op.Concat({op.Concat({va, va}, {.axis = 1}), op.Concat({vb, vb}, {.axis = 1})}, {.axis = -1});
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  Value* o = op.Attention(q, k, paired, ctx.mask, nullptr, nullptr, {.scale = scale}).y;  // [b, H, seq, 2d]
  o = op.Transpose(o, {.perm = {0, 2, 1, 3}});                                          // [b, seq, H, 2d]
  // lambda in float32 (torch.sum(..., dtype=torch.float32)), then the model dtype
  auto f32 = [&](Parameter* p) {
    Value* t = p->value(op);
    return t->dtype == DataType::FLOAT ? t : op.Cast(t, {.to = DataType::FLOAT});
  };
  auto term = [&](Parameter* pq, Parameter* pk) { return op.Exp(op.ReduceSum(op.Mul(f32(pq), f32(pk)), {0})); };
  Value* lambda = op.Add(op.Sub(term(lambda_q1, lambda_k1), term(lambda_q2, lambda_k2)), o_.lambda_init);
  if (a.dtype != DataType::FLOAT) lambda = op.Cast(lambda, {.to = a.dtype});
  Value* diff = op.Sub(op.Slice(o, {0}, {H / 2}, {2}), op.Mul(op.Slice(o, {H / 2}, {H}, {2}), lambda));
  Value* y = op.Mul(groupnorm->forward(op, diff), 1.0 - o_.lambda_init);
  y = o_proj->forward(op, op.Reshape(y, {0, 0, -1}));
  if (!past_key) return {y, nullptr, nullptr};
  return {y, k, v};
}

}  // namespace mobius
