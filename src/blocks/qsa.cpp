#include "blocks/qsa.h"

#include <cmath>

#include "blocks/dsa.h"
#include "util/error.h"

namespace mobius {

QsaIndexer::QsaIndexer(const QsaIndexerOptions& o) : o_(o) {
  MOBIUS_ASSERT(o.num_heads > 0 && o.head_dim > 0 && o.compress_ratio > 0 && o.budget >= o.compress_ratio &&
                    o.budget % o.compress_ratio == 0 && o.rope.rotary_dim() <= o.head_dim,
                "a QSA indexer has heads, a head of at least the rotary channels and a budget of whole blocks");
  index_qk_proj = child<Linear>("index_qk_proj",
                                LinearOptions{o.hidden_size, (o.num_heads + 1) * o.head_dim, false, o.dtype});
  const NormOptions norm{.dim = o.head_dim, .eps = o.norm_eps, .dtype = o.dtype, .weight_offset_one = true};
  q_layernorm = adopt("q_layernorm", make_norm(norm));
  k_layernorm = adopt("k_layernorm", make_norm(norm));
}

StateTensor QsaIndexer::state() const {
  return {.name = "indexer_keys", .shape = {"batch_size", "past_sequence_length", o_.head_dim},
          .update = StateUpdate::append, .axis = 1};
}

QsaIndexer::Result QsaIndexer::forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_keys) const {
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  const int64_t d = o_.head_dim, heads = o_.num_heads, r = o_.compress_ratio;
  const DataType f32 = DataType::FLOAT;
  auto to_float = [&](Value* y) { return y->dtype == f32 ? y : op.Cast(y, {.to = f32}); };
  // the attention's tables on the first rotary_dim channels of the index heads
  const int64_t rotary = o_.rope.rotary_dim() == d ? 0 : o_.rope.rotary_dim();
  RopeTables query_rope = ctx.rope;
  query_rope.rotary_dim = rotary;

  std::vector<Value*> qk = op.Split(index_qk_proj->forward(op, x), {heads * d, d}, {.axis = -1});
  Value* q = q_layernorm->forward(op, op.Reshape(qk[0], {0, 0, heads, d}));
  q = apply_rope(op, op.Transpose(q, {.perm = {0, 2, 1, 3}}), query_rope);         // [b, heads, s, d]
  Value* keys = past_keys ? op.Concat({past_keys, qk[1]}, {.axis = 1}) : qk[1];      // [b, T, d] raw

  // the visible keys of each query, and each key's block by its rank among its row's visible keys
  Value* visible = op.Squeeze(op.Equal(ctx.mask, 0.0), {1});                          // bool [b, s, T]
  Value* visible_i = op.Cast(visible, {.to = DataType::INT64});
  Value* seen = op.ReduceMax(visible_i, {1}, {.keepdims = 0});                         // [b, T]
  Value* rank = op.Sub(op.CumSum(seen, b.scalar_i64(1)), 1.0);
  Value* block = op.Div(op.Max(rank, 0.0), static_cast<double>(r));                   // [b, T]
  Value* complete = op.Div(op.ReduceSum(visible_i, {2}), static_cast<double>(r));     // [b, s, 1]

  // block keys: the visible keys in cache order, r zero rows after, cut into NB = T / r + 1 blocks
  // (the last never complete, so that no block count is 0)
  Value* batch = op.Shape(keys, {.start = 0, .end = 1});
  Value* total = op.Shape(keys, {.start = 1, .end = 2});
  Value* index = op.Range(b.scalar_i64(0), op.Squeeze(total, {0}), b.scalar_i64(1));  // [T]
  Value* order_key = op.Where(op.Cast(seen, {.to = DataType::BOOL}), index, op.Add(index, op.Squeeze(total, {0})));
  TopKOutputs order = op.TopK(order_key, total, {.axis = -1, .largest = 0, .sorted = 1});
  Value* sorted = op.GatherElements(to_float(keys), op.Expand(op.Unsqueeze(order.indices, {2}), op.Shape(keys)),
                                    {.axis = 1});
  Value* zero_rows = op.Expand(b.constant_float({0.0f}, {}, f32), op.Concat({batch, b.ints({r, d})}, {.axis = 0}));
  Value* nb = op.Add(op.Div(total, static_cast<double>(r)), 1.0);                     // [1]
  sorted = op.Slice(op.Concat({sorted, zero_rows}, {.axis = 1}), b.ints({0}), op.Mul(nb, static_cast<double>(r)),
                    b.ints({1}));
  Value* pooled = op.ReduceMean(op.Reshape(sorted, op.Concat({batch, nb, b.ints({r, d})}, {.axis = 0})), {2},
                                {.keepdims = 0});                                     // [b, NB, d] float32
  if (x->dtype != f32) pooled = op.Cast(pooled, {.to = x->dtype});
  Value* block_keys = k_layernorm->forward(op, pooled);
  Value* blocks = op.Range(b.scalar_i64(0), op.Squeeze(nb, {0}), b.scalar_i64(1));    // [NB]
  Value* starts = op.Expand(op.Unsqueeze(op.Mul(blocks, static_cast<double>(r)), {0}),
                            op.Concat({batch, nb}, {.axis = 0}));                     // [b, NB]
  RopeTables key_rope = rope_tables(op, o_.rope, starts, x->dtype);
  key_rope.rotary_dim = rotary;
  block_keys = op.Squeeze(apply_rope(op, op.Unsqueeze(block_keys, {1}), key_rope), {1});  // [b, NB, d]

  // scores over the complete blocks; the best min(budget / r, NB) of them (incomplete ones dropped)
  Value* key_t = op.Unsqueeze(op.Transpose(to_float(block_keys), {.perm = {0, 2, 1}}), {1});  // [b, 1, d, NB]
  Value* scores = op.ReduceSum(op.Relu(op.MatMul(to_float(q), key_t)), {1}, {.keepdims = 0});  // [b, s, NB]
  scores = op.Div(scores, std::sqrt(static_cast<double>(d)));
  Value* is_complete = op.Less(blocks, complete);                                       // [b, s, NB]
  scores = op.Where(is_complete, scores, lowest_value(f32));
  TopKOutputs top = op.TopK(scores, op.Min(b.ints({o_.budget / r}), nb));  // ties: the lower block first
  Value* zeros = op.Expand(b.constant_float({0.0f}, {}, f32), op.Shape(scores));
  Value* ones = op.Expand(b.constant_float({1.0f}, {}, f32), op.Shape(top.indices));
  Value* chosen = op.Mul(op.ScatterElements(zeros, top.indices, ones, {.axis = 2}), op.Cast(is_complete, {.to = f32}));

  // a token is kept where visible and in a chosen block or after the query's complete blocks
  Value* token_block = op.Expand(op.Unsqueeze(block, {1}), op.Shape(visible));         // [b, s, T]
  Value* in_chosen = op.Cast(op.GatherElements(chosen, token_block, {.axis = 2}), {.to = DataType::BOOL});
  Value* in_tail = op.GreaterOrEqual(op.Unsqueeze(block, {1}), complete);
  Value* kept = op.And(visible, op.Or(in_chosen, in_tail));
  return {op.Unsqueeze(kept, {1}), keys};
}

QsaAttention::QsaAttention(const AttentionOptions& a, const QsaIndexerOptions& i) : Attention(a), dtype_(a.dtype) {
  indexer = child<QsaIndexer>("indexer", i);
}

LayerStates QsaAttention::states() const {
  LayerState keys{StateKind::attention_side};
  keys.tensors = {indexer->state()};
  return {state(), keys};
}

MixerResult QsaAttention::mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.empty() || past.size() == 3, "a QSA attention takes its past {key, value, indexer_keys} or none");
  const bool cached = !past.empty();
  AttentionContext sparse = ctx;
  QsaIndexer::Result selection;
  {
    auto s = enter(op);
    selection = indexer->forward(op, x, ctx, cached ? past[2] : nullptr);
    sparse.mask = sparse_attention_mask(op, ctx.mask, selection.kept, dtype_);
  }
  AttentionResult a = forward(op, x, sparse, cached ? past[0] : nullptr, cached ? past[1] : nullptr);
  MixerResult out{a.hidden, {}};
  if (cached) out.present = {a.present_key, a.present_value, selection.present_keys};
  return out;
}

}  // namespace mobius
