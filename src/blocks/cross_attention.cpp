#include "blocks/cross_attention.h"

#include <cmath>

namespace mobius {

CrossAttention::CrossAttention(const AttentionOptions& o) : o_(o) {
  const int64_t dim = o.num_attention_heads * o.head_dim;
  const AttentionNames& n = o.names;
  q_proj = child<Linear>(n.q_proj, LinearOptions{o.hidden_size, dim, o.qkv_bias, o.dtype});
  k_proj = child<Linear>(n.k_proj, LinearOptions{o.hidden_size, dim, o.qkv_bias && o.k_bias, o.dtype});
  v_proj = child<Linear>(n.v_proj, LinearOptions{o.hidden_size, dim, o.qkv_bias, o.dtype});
  o_proj = child<Linear>(n.o_proj, LinearOptions{dim, o.hidden_size, o.o_bias, o.dtype});
}

Value* CrossAttention::heads(Ops& op, Value* x) const {
  return op.Transpose(op.Reshape(x, {0, 0, o_.num_attention_heads, o_.head_dim}), {.perm = {0, 2, 1, 3}});
}

AttentionResult CrossAttention::forward(Ops& op, Value* x, Value* encoder_hidden_states, Value* mask,
                                        Value* past_key, Value* past_value) const {
  auto s = enter(op);
  Value* q = heads(op, q_proj->forward(op, x));
  Value *k = past_key, *v = past_value;
  if (encoder_hidden_states) {
    // The cross length: the cache's once it is filled (Optimum and transformers.js pass the
    // encoder's output again at every step: its projection is dropped), else the states'.
    // Where, not Max: a caller may pass states longer than the cache.
    Value* zero = op.builder().ints({0});
    Value* past_len = op.Shape(past_key, {.start = 2, .end = 3});
    Value* new_len = op.Shape(encoder_hidden_states, {.start = 1, .end = 2});
    Value* len = op.Where(op.Equal(past_len, zero), new_len, past_len);
    Value* axis = op.builder().ints({2});
    const KVPair kv = project_heads(op, encoder_hidden_states);
    k = op.Slice(op.Concat({past_key, kv.key}, {.axis = 2}), zero, len, axis);
    v = op.Slice(op.Concat({past_value, kv.value}, {.axis = 2}), zero, len, axis);
  }
  const float scale = o_.scale ? *o_.scale : 1.0f / std::sqrt(static_cast<float>(o_.head_dim));
  AttentionOutputs a = op.Attention(q, k, v, mask, nullptr, nullptr, {.scale = scale});
  const int64_t heads = o_.num_attention_heads;
  op.builder().producer(a.y).tags = {.num_heads = heads, .kv_num_heads = heads, .head_size = o_.head_dim};
  Value* y = op.Reshape(op.Transpose(a.y, {.perm = {0, 2, 1, 3}}), {0, 0, -1});
  return {o_proj->forward(op, y), k, v};
}

KVPair CrossAttention::project_heads(Ops& op, Value* encoder_hidden_states) const {
  return {heads(op, k_proj->forward(op, encoder_hidden_states)), heads(op, v_proj->forward(op, encoder_hidden_states))};
}

KVPair CrossAttention::project(Ops& op, Value* encoder_hidden_states) const {
  auto s = enter(op);
  return project_heads(op, encoder_hidden_states);
}

Value* cross_attention_mask(Ops& op, Value* encoder_attention_mask, Value* input_ids, DataType dtype) {
  auto s = op.builder().scope("cross_attention_mask");
  Value* keep = op.Cast(op.Unsqueeze(encoder_attention_mask, {1, 2}), {.to = DataType::BOOL});  // [b, 1, 1, enc]
  Value* one = op.builder().ints({1});
  keep = op.Expand(keep, op.Concat({one, one, op.Shape(input_ids, {.start = 1, .end = 2}), one}, {.axis = 0}));
  return additive_mask(op, keep, dtype);
}

Value* decoder_causal_mask(Ops& op, Value* input_ids, Value* past, DataType dtype) {
  auto s = op.builder().scope("decoder_causal_mask");
  Value* seq = op.Shape(input_ids, {.start = 1, .end = 2});
  Value* total = op.Add(past, seq);
  Value* one = op.builder().scalar_i64(1);
  Value* q_idx = op.Unsqueeze(op.Range(op.Squeeze(past, {0}), op.Squeeze(total, {0}), one), {1});
  Value* k_idx = op.Unsqueeze(op.Range(op.builder().scalar_i64(0), op.Squeeze(total, {0}), one), {0});
  Value* allowed = op.Unsqueeze(op.LessOrEqual(k_idx, q_idx), {0, 1});  // [1, 1, seq, total]
  Value* ones = op.builder().ints({1});
  Value* shape = op.Concat({op.Shape(input_ids, {.start = 0, .end = 1}), ones, seq, total}, {.axis = 0});
  return additive_mask(op, op.Expand(allowed, shape), dtype);
}

}  // namespace mobius
