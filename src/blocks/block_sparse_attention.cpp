#include "blocks/block_sparse_attention.h"

#include <limits>

#include "blocks/rope.h"
#include "util/error.h"

namespace mobius {

BlockIndexer::BlockIndexer(const BlockIndexerOptions& o) : o_(o) {
  MOBIUS_ASSERT(o.num_heads > 0 && o.head_dim > 0 && o.head_dim % 2 == 0 && o.rotary_dim > 0 && o.block_size > 0 && o.topk_blocks > 0 && o.local_blocks >= 0,
                "a block indexer has heads, a head size, a block size and a positive top-k");
  q_proj = child<Linear>("q_proj", LinearOptions{o.hidden_size, o.num_heads * o.head_dim, false, o.dtype});
  k_proj = child<Linear>("k_proj", LinearOptions{o.hidden_size, o.head_dim, false, o.dtype});
  const NormOptions norm{.dim = o.head_dim, .eps = o.norm_eps, .dtype = o.dtype, .weight_offset_one = true};
  q_norm = adopt("q_norm", make_norm(norm));
  k_norm = adopt("k_norm", make_norm(norm));
}

StateTensor BlockIndexer::state() const {
  return {.name = "indexer_keys", .shape = {"batch_size", "past_sequence_length", o_.head_dim},
          .update = StateUpdate::append, .axis = 1};
}

Value* BlockIndexer::rotate(Ops& op, Value* x, const RopeTables& rope) const {
  const int64_t d = o_.head_dim, r = o_.rotary_dim;
  if (d >= r) {  // the first r channels (r: the whole attention head when the tables say 0)
    RopeTables t = rope;
    if (d > r) t.rotary_dim = r;
    return apply_rope(op, x, t);
  }
  // apply_rotary_pos_emb with cos[..., :d] of the attention's [cos | cos] (MiniMaxM3VLIndexer)
  auto first = [&](Value* half) {
    return op.Unsqueeze(op.Slice(op.Concat({half, half}, {.axis = -1}), {0}, {d}, {-1}), {1});  // [b, 1, s, d]
  };
  Value* x1 = op.Slice(x, {0}, {d / 2}, {-1});
  Value* x2 = op.Slice(x, {d / 2}, {d}, {-1});
  Value* rotated = op.Concat({op.Neg(x2), x1}, {.axis = -1});
  return op.Add(op.Mul(x, first(rope.cos)), op.Mul(rotated, first(rope.sin)));
}

BlockIndexer::Result BlockIndexer::forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_keys) const {
  MOBIUS_ASSERT(ctx.position_ids && ctx.rope.cos, "the block indexer reads the position_ids and the RoPE tables");
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  const int64_t d = o_.head_dim;
  const float inf = std::numeric_limits<float>::infinity();
  auto to_float = [&](Value* y) { return y->dtype == DataType::FLOAT ? y : op.Cast(y, {.to = DataType::FLOAT}); };
  Value* q = q_norm->forward(op, op.Reshape(q_proj->forward(op, x), {0, 0, o_.num_heads, d}));
  q = rotate(op, op.Transpose(q, {.perm = {0, 2, 1, 3}}), ctx.rope);                 // [b, heads, s, d]
  Value* k = op.Unsqueeze(k_norm->forward(op, k_proj->forward(op, x)), {1});             // [b, 1, s, d]
  k = op.Squeeze(rotate(op, k, ctx.rope), {1});                                       // [b, s, d]
  Value* keys = past_keys ? op.Concat({past_keys, k}, {.axis = 1}) : k;                   // [b, total, d]
  Value* key_t = op.Unsqueeze(op.Transpose(to_float(keys), {.perm = {0, 2, 1}}), {1});   // [b, 1, d, total]
  Value* scores = op.MatMul(to_float(q), key_t);                                           // [b, heads, s, total]
  // a key's cache slot after the query's position: -inf
  Value* total = op.Shape(keys, {.start = 1, .end = 2});
  Value* slots = op.Range(b.scalar_i64(0), op.Squeeze(total, {0}), b.scalar_i64(1));  // [total]
  Value* positions = op.Unsqueeze(ctx.position_ids, {1, 3});                               // [b, 1, s, 1]
  Value* minus_inf = b.constant_float({-inf}, {}, DataType::FLOAT);
  scores = op.Where(op.Greater(slots, positions), minus_inf, scores);
  // blocks of block_size slots, the last padded with -inf; a block scores its best key
  const int bs = static_cast<int>(o_.block_size);
  Value* pad = op.Sub(op.Mul(op.Div(op.Add(total, bs - 1), bs), bs), total);               // [1]
  Value* filler = op.Expand(minus_inf, op.Concat({op.Shape(scores, {.start = 0, .end = 3}), pad}, {.axis = 0}));
  Value* blocks = op.Reshape(op.Concat({scores, filler}, {.axis = 3}), {0, 0, 0, -1, o_.block_size});
  Value* block_scores = op.ReduceMax(blocks, {4}, {.keepdims = 0});                       // [b, heads, s, nb]
  Value* count = op.Shape(block_scores, {.start = 3, .end = 4});
  if (o_.local_blocks > 0) {
    // the local_blocks blocks ending at the query's block (position_id // block_size, clamped at 0)
    Value* block = op.Range(b.scalar_i64(0), op.Squeeze(count, {0}), b.scalar_i64(1));  // [nb]
    Value* own = op.Div(positions, bs);
    Value* local = op.And(op.LessOrEqual(block, own), op.GreaterOrEqual(block, op.Sub(own, static_cast<int>(o_.local_blocks - 1))));
    block_scores = op.Where(local, b.constant_float({inf}, {}, DataType::FLOAT), block_scores);
  }
  TopKOutputs top = op.TopK(block_scores, op.Min(b.ints({o_.topk_blocks}), count));
  Value* chosen = op.Cast(op.Greater(top.values, minus_inf), {.to = DataType::FLOAT});  // -inf: no block
  Value* zeros = op.Expand(b.constant_float({0.0f}, {}, DataType::FLOAT), op.Shape(block_scores));
  Value* kept_blocks = op.ScatterElements(zeros, top.indices, chosen, {.axis = 3});      // [b, heads, s, nb]
  // every key of a kept block, cut back to the cache's length
  Value* per_key = op.Expand(op.Unsqueeze(kept_blocks, {4}), b.ints({1, 1, 1, 1, o_.block_size}));
  per_key = op.Slice(op.Reshape(per_key, {0, 0, 0, -1}), b.ints({0}), total, b.ints({3}));
  return {op.Cast(per_key, {.to = DataType::BOOL}), keys};
}

BlockSparseAttention::BlockSparseAttention(const AttentionOptions& a, const BlockIndexerOptions& i)
    : Attention(a), num_attention_heads_(a.num_attention_heads), num_key_value_heads_(a.num_key_value_heads), dtype_(a.dtype) {
  MOBIUS_ASSERT(i.num_heads == a.num_key_value_heads, "the indexer selects for each key/value head");
  indexer = child<BlockIndexer>("indexer", i);
}

LayerStates BlockSparseAttention::states() const {
  LayerState keys{StateKind::attention_side};
  keys.tensors = {indexer->state()};
  return {state(), keys};
}

MixerResult BlockSparseAttention::mix(Ops& op, Value* x, const AttentionContext& ctx,
                                      std::span<Value* const> past) const {
  MOBIUS_ASSERT(past.empty() || past.size() == 3, "a block-sparse attention takes its past {key, value, indexer_keys} or none");
  const bool cached = !past.empty();
  BlockIndexer::Result sparse;
  AttentionContext sparse_ctx = ctx;
  {
    auto s = enter(op);
    sparse = indexer->forward(op, x, ctx, cached ? past[2] : nullptr);
    Value* kept = sparse.kept;  // [b, kv_heads, s, total]: each key/value head's selection for its group
    const int64_t groups = num_attention_heads_ / num_key_value_heads_;
    if (groups > 1) {
      Value* shape = op.Concat({op.Shape(kept, {.start = 0, .end = 1}), op.builder().ints({num_attention_heads_}),
                                op.Shape(kept, {.start = 2, .end = 4})}, {.axis = 0});
      kept = op.Reshape(op.Expand(op.Unsqueeze(kept, {2}), op.builder().ints({1, 1, groups, 1, 1})), shape);
    }
    sparse_ctx.mask = op.Where(kept, ctx.mask, op.builder().constant_float({lowest_value(dtype_)}, {}, dtype_));
  }
  AttentionResult a = forward(op, x, sparse_ctx, cached ? past[0] : nullptr, cached ? past[1] : nullptr);
  MixerResult r{a.hidden, {}};
  if (cached) r.present = {a.present_key, a.present_value, sparse.present_keys};
  return r;
}

}  // namespace mobius
