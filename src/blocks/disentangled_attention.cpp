#include "blocks/disentangled_attention.h"

#include <cmath>

#include "util/error.h"

namespace mobius {

Value* disentangled_position_index(Ops& op, Value* seq, const DisentangledAttentionOptions& o) {
  GraphBuilder& b = op.builder();
  Value* pos = op.Range(b.scalar_i64(0), op.Squeeze(seq, {0}), b.scalar_i64(1));
  Value* rel = op.Sub(op.Unsqueeze(pos, {1}), op.Unsqueeze(pos, {0}));  // i - j, [seq, seq]
  const int64_t span = o.span();
  if (o.position_buckets > 0 && o.max_relative_positions > 0) {
    // make_log_bucket_position, in float32 as torch computes it:
    //   abs = mid - 1 where |rel| < mid, else |rel|
    //   log = ceil(log(abs / mid) / log((max_position - 1) / mid) * (mid - 1)) + mid
    //   bucket = rel where abs <= mid, else sign(rel) * log
    const int64_t mid = o.position_buckets / 2;
    Value* magnitude = op.Abs(rel);
    Value* abs_pos = op.Where(op.Less(magnitude, static_cast<double>(mid)), b.scalar_i64(mid - 1), magnitude);
    const float log_max = std::log(static_cast<float>(static_cast<double>(o.max_relative_positions - 1) / mid));
    Value* ratio = op.Div(op.Log(op.Div(op.Cast(abs_pos, {.to = DataType::FLOAT}), static_cast<float>(mid))), log_max);
    Value* scaled = op.Mul(ratio, static_cast<float>(mid - 1));
    Value* ceil = op.Neg(op.Floor(op.Neg(scaled)));
    Value* log_pos = op.Add(op.Cast(ceil, {.to = DataType::INT64}), static_cast<double>(mid));
    Value* signed_log = op.Where(op.Less(rel, 0.0), op.Neg(log_pos), log_pos);
    rel = op.Where(op.LessOrEqual(abs_pos, static_cast<double>(mid)), rel, signed_log);
  }
  return op.Min(op.Max(op.Add(rel, static_cast<double>(span)), 0.0), static_cast<double>(2 * span - 1));
}

DisentangledSelfAttention::DisentangledSelfAttention(const DisentangledAttentionOptions& o) : o_(o) {
  MOBIUS_ASSERT(o.num_attention_heads > 0 && o.head_dim > 0, "disentangled attention: heads and head_dim");
  const int64_t all = o.num_attention_heads * o.head_dim;
  const bool own_pos = o.relative_attention && !o.share_att_key;
  if (o.projections == DisentangledProjections::kFused) {
    MOBIUS_ASSERT(!o.share_att_key, "disentangled attention: fused projections have their own position projections");
    in_proj = child<Linear>("in_proj", LinearOptions{o.hidden_size, 3 * all, false, o.dtype});
    q_bias = param("q_bias", {all}, o.dtype);
    v_bias = param("v_bias", {all}, o.dtype);
    if (own_pos && o.c2p) pos_key_proj = child<Linear>("pos_proj", LinearOptions{o.hidden_size, all, false, o.dtype});
    if (own_pos && o.p2c) pos_query_proj = child<Linear>("pos_q_proj", LinearOptions{o.hidden_size, all, true, o.dtype});
    return;
  }
  query_proj = child<Linear>("query_proj", LinearOptions{o.hidden_size, all, true, o.dtype});
  key_proj = child<Linear>("key_proj", LinearOptions{o.hidden_size, all, true, o.dtype});
  value_proj = child<Linear>("value_proj", LinearOptions{o.hidden_size, all, true, o.dtype});
  if (own_pos && o.c2p) pos_key_proj = child<Linear>("pos_key_proj", LinearOptions{o.hidden_size, all, true, o.dtype});
  if (own_pos && o.p2c) pos_query_proj = child<Linear>("pos_query_proj", LinearOptions{o.hidden_size, all, true, o.dtype});
}

Value* DisentangledSelfAttention::heads(Ops& op, Value* x) const {
  return op.Transpose(op.Reshape(x, {0, 0, o_.num_attention_heads, o_.head_dim}), {.perm = {0, 2, 1, 3}});
}

std::array<Value*, 3> DisentangledSelfAttention::project(Ops& op, Value* x) const {
  if (!in_proj) return {heads(op, query_proj->forward(op, x)), heads(op, key_proj->forward(op, x)),
                        heads(op, value_proj->forward(op, x))};
  // [batch, seq, heads, 3 * head_dim] -> [batch, heads, seq, 3 * head_dim], chunked in q, k, v
  Value* qkv = op.Transpose(op.Reshape(in_proj->forward(op, x), {0, 0, o_.num_attention_heads, 3 * o_.head_dim}),
                            {.perm = {0, 2, 1, 3}});
  std::vector<Value*> parts = op.Split(qkv, {o_.head_dim, o_.head_dim, o_.head_dim}, {.axis = 3});
  // the biases [heads * head_dim] as [heads, 1, head_dim]
  auto bias = [&](const Parameter* p) { return op.Reshape(p->value(op), {o_.num_attention_heads, 1, o_.head_dim}); };
  return {op.Add(parts[0], bias(q_bias)), parts[1], op.Add(parts[2], bias(v_bias))};
}

Value* DisentangledSelfAttention::forward(Ops& op, Value* x, Value* rel_embeddings, Value* position_index,
                                          Value* mask, Value* query_valid) const {
  auto s = enter(op);
  const std::array<Value*, 3> qkv = project(op, x);
  Value *q = qkv[0], *k = qkv[1], *v = qkv[2];
  const int64_t factor = 1 + (o_.c2p ? 1 : 0) + (o_.p2c ? 1 : 0);
  const float scale = 1.0f / std::sqrt(static_cast<float>(o_.head_dim * factor));
  Value* bias = mask;
  if (o_.relative_attention && (o_.c2p || o_.p2c)) {
    Value* r = op.Unsqueeze(rel_embeddings, {0});  // [1, 2 * span, hidden]
    // [batch, heads, seq, seq]: the index the gathers read along the last axis
    Value* scores_shape = op.Concat({op.Shape(q, {.start = 0, .end = 3}), op.Shape(k, {.start = 2, .end = 3})}, {.axis = 0});
    Value* terms = nullptr;
    auto add = [&](Value* t) { terms = terms ? op.Add(terms, t) : t; };
    if (o_.c2p) {  // c2p[i, j] = q_i . pos_key[idx(i, j)]
      Value* pos_key = heads(op, (pos_key_proj ? pos_key_proj : key_proj)->forward(op, r));  // [1, heads, 2 span, d]
      Value* all = op.MatMul(q, op.Transpose(pos_key, {.perm = {0, 1, 3, 2}}));                // [batch, heads, seq, 2 span]
      add(op.GatherElements(all, op.Expand(position_index, scores_shape), {.axis = -1}));
    }
    if (o_.p2c) {  // p2c[i, j] = k_j . pos_query[idx(i, j)]: gathered at [j, idx(i, j)], then transposed
      Value* pos_query = heads(op, (pos_query_proj ? pos_query_proj : query_proj)->forward(op, r));
      Value* all = op.MatMul(k, op.Transpose(pos_query, {.perm = {0, 1, 3, 2}}));
      Value* index = op.Expand(op.Transpose(position_index, {.perm = {1, 0}}), scores_shape);
      add(op.Transpose(op.GatherElements(all, index, {.axis = -1}), {.perm = {0, 1, 3, 2}}));
    }
    terms = op.Mul(terms, scale);
    bias = bias ? op.Add(bias, terms) : terms;
  }
  AttentionOutputs a = op.Attention(q, k, v, bias, nullptr, nullptr, {.scale = scale});
  // the head counts and size the multi_head_attention pass (--ep cpu) reads
  op.builder().producer(a.y).tags = {.num_heads = o_.num_attention_heads, .kv_num_heads = o_.num_attention_heads,
                                     .head_size = o_.head_dim};
  Value* y = query_valid ? op.Where(query_valid, a.y, op.ReduceMean(v, {2})) : a.y;  // [batch, heads, seq, d]
  return op.Reshape(op.Transpose(y, {.perm = {0, 2, 1, 3}}), {0, 0, -1});
}

}  // namespace mobius
