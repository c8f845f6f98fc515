#include "blocks/moa.h"

#include <cmath>

namespace mobius {

MixtureOfAttentionHeads::MixtureOfAttentionHeads(const MoAOptions& o) : o_(o) {
  o_.router.kind = RouterKind::topk_softmax;
  o_.router.hidden_size = o.hidden_size;
  o_.router.dtype = o.dtype;
  const int64_t E = o.router.num_experts, H = o.hidden_size, kv = o.num_key_value_heads * o.head_dim;
  router = child<MoERouter>("experts.router.layer", o_.router);
  input_linear = param("experts.input_linear.weight", {E, H, kv}, o.dtype, /*transpose=*/true);
  output_linear = param("experts.output_linear.weight", {E, kv, H}, o.dtype, /*transpose=*/true);
  bias = param("experts.bias", {H}, o.dtype);
  kv_proj = child<Linear>("kv_proj", LinearOptions{H, 2 * kv, false, o.dtype});
}

AttentionResult MixtureOfAttentionHeads::forward(Ops& op, Value* x, const AttentionContext& ctx,
                                                 Value* past_key, Value* past_value) const {
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  const int64_t E = o_.router.num_experts, KV = o_.num_key_value_heads, d = o_.head_dim, kv = KV * d;
  Value* flat = op.Reshape(x, {-1, o_.hidden_size});                           // [tokens, H]
  Value* routing = op.Transpose(router->forward(op, flat), {.perm = {1, 0}});  // [E, tokens]

  // every expert's queries: [E, tokens, kv] -> [batch, KV * E, seq, d], head h * E + e reading kv head h
  Value* batch_seq = op.Shape(x, {.start = 0, .end = 2});
  Value* q = op.MatMul(flat, input_linear->value(op));
  q = op.Reshape(q, op.Concat({b.ints({E}), batch_seq, b.ints({KV, d})}, {.axis = 0}));  // [E, b, s, KV, d]
  q = op.Reshape(op.Transpose(q, {.perm = {1, 3, 0, 2, 4}}), {0, KV * E, -1, d});
  Value* k_v = kv_proj->forward(op, x);
  auto heads = [&](Value* t) { return op.Transpose(op.Reshape(t, {0, 0, KV, d}), {.perm = {0, 2, 1, 3}}); };
  Value* k = heads(op.Slice(k_v, {0}, {kv}, {-1}));
  Value* v = heads(op.Slice(k_v, {kv}, {2 * kv}, {-1}));
  q = apply_rope(op, q, ctx.rope);
  k = apply_rope(op, k, ctx.rope);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  AttentionOutputs a = op.Attention(q, k, v, ctx.mask, past_key, past_value, {.scale = scale});
  op.builder().producer(a.y).tags = {.num_heads = KV * E, .kv_num_heads = KV, .head_size = d};

  // [batch, KV * E, seq, d] -> [E, tokens, kv] -> each expert's output projection, weighted
  Value* y = op.Transpose(op.Reshape(a.y, {0, KV, E, -1, d}), {.perm = {2, 0, 3, 1, 4}});
  y = op.MatMul(op.Reshape(y, {E, -1, kv}), output_linear->value(op));        // [E, tokens, H]
  Value* out = op.ReduceSum(op.Mul(y, op.Unsqueeze(routing, {-1})), {0}, {.keepdims = 0});
  out = op.Add(out, bias->value(op));
  return {op.Reshape(out, op.Shape(x)), a.present_key, a.present_value};
}

}  // namespace mobius
