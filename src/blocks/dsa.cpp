#include "blocks/dsa.h"

#include <cmath>

#include "util/error.h"

namespace mobius {

LightningIndexer::LightningIndexer(const IndexerOptions& o) : o_(o) {
  MOBIUS_ASSERT(o.num_heads > 0 && o.head_dim > 0 && o.topk > 0 && o.rope_dim > 0 && o.rope_dim <= o.head_dim,
                "an indexer has heads, a head size of at least its rotary channels and a positive top-k");
  wq_b = child<Linear>("wq_b", LinearOptions{o.q_lora_rank, o.num_heads * o.head_dim, false, o.dtype});
  wk = child<Linear>("wk", LinearOptions{o.hidden_size, o.head_dim, false, o.dtype});
  k_norm = adopt("k_norm", make_norm({.dim = o.head_dim, .eps = 1e-6f, .dtype = o.dtype, .bias = true,
                                      .kind = NormKind::LayerNorm}));
  weights_proj = child<Linear>("weights_proj", LinearOptions{o.hidden_size, o.num_heads, false, DataType::FLOAT});
}

StateTensor LightningIndexer::state() const {
  return {.name = "indexer_keys", .shape = {"batch_size", "past_sequence_length", o_.head_dim},
          .update = StateUpdate::append, .axis = 1};
}

LightningIndexer::Result LightningIndexer::forward(Ops& op, Value* x, Value* q_latent, const AttentionContext& ctx,
                                                   Value* past_keys) const {
  auto s = enter(op);
  GraphBuilder& b = op.builder();
  const int64_t d = o_.head_dim, r = o_.rope_dim;
  auto rotate = [&](Value* y) {  // [batch, heads, seq, d]: RoPE on the first r channels
    if (r == d) return apply_rope(op, y, ctx.rope, o_.rope_interleave);
    Value* rotated = apply_rope(op, op.Slice(y, {0}, {r}, {-1}), ctx.rope, o_.rope_interleave);
    return op.Concat({rotated, op.Slice(y, {r}, {d}, {-1})}, {.axis = -1});
  };
  auto to_float = [&](Value* y) { return y->dtype == DataType::FLOAT ? y : op.Cast(y, {.to = DataType::FLOAT}); };
  Value* q = op.Transpose(op.Reshape(wq_b->forward(op, q_latent), {0, 0, o_.num_heads, d}), {.perm = {0, 2, 1, 3}});
  q = rotate(q);                                                                   // [b, heads, s, d]
  Value* k = op.Squeeze(rotate(op.Unsqueeze(k_norm->forward(op, wk->forward(op, x)), {1})), {1});  // [b, s, d]
  Value* keys = past_keys ? op.Concat({past_keys, k}, {.axis = 1}) : k;             // [b, total, d]
  Value* key_t = op.Unsqueeze(op.Transpose(to_float(keys), {.perm = {0, 2, 1}}), {1});  // [b, 1, d, total]
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Value* scores = op.Relu(op.Mul(op.MatMul(to_float(q), key_t), scale));          // [b, heads, s, total]
  const double head_scale = 1.0 / std::sqrt(static_cast<double>(o_.num_heads));
  Value* w = op.Mul(weights_proj->forward(op, to_float(x)), head_scale);           // [b, s, heads]
  w = op.Unsqueeze(op.Transpose(w, {.perm = {0, 2, 1}}), {3});                     // [b, heads, s, 1]
  Value* index = op.Add(op.ReduceSum(op.Mul(scores, w), {1}), to_float(ctx.mask));  // [b, 1, s, total]
  // the min(topk, total) best keys per query (masked ones too where fewer are allowed: the attention
  // mask keeps them masked, sparse_attention_mask)
  Value* count = op.Min(b.ints({o_.topk}), op.Shape(index, {.start = 3, .end = 4}));
  TopKOutputs top = op.TopK(index, count);  // ties: the lower key index first (ONNX TopK)
  Value* zeros = op.Expand(b.constant_float({0.0f}, {}, DataType::FLOAT), op.Shape(index));
  Value* ones = op.Expand(b.constant_float({1.0f}, {}, DataType::FLOAT), op.Shape(top.indices));
  Value* kept = op.Cast(op.ScatterElements(zeros, top.indices, ones, {.axis = 3}), {.to = DataType::BOOL});
  return {kept, keys};
}

Value* sparse_attention_mask(Ops& op, Value* mask, Value* kept, DataType dtype) {
  return op.Where(kept, mask, op.builder().constant_float({lowest_value(dtype)}, {}, dtype));
}

SparseLatentAttention::SparseLatentAttention(const MLAOptions& m, const std::optional<IndexerOptions>& i)
    : MultiHeadLatentAttention(m), dtype_(m.dtype) {
  if (!i) return;
  MOBIUS_ASSERT(m.q_lora_rank && *m.q_lora_rank == i->q_lora_rank, "the indexer reads the MLA's query latent");
  indexer = child<LightningIndexer>("indexer", *i);
}

LayerStates SparseLatentAttention::states() const {
  if (!indexer) return {state()};
  LayerState keys{StateKind::attention_side};
  keys.tensors = {indexer->state()};
  return {state(), keys};
}

MixerResult SparseLatentAttention::mix(Ops& op, Value* x, const AttentionContext& ctx,
                                       std::span<Value* const> past) const {
  const size_t count = indexer ? 3 : 2;
  MOBIUS_ASSERT(past.empty() || past.size() == count, "a sparse latent attention takes its past {key, value[, indexer_keys]} or none");
  MOBIUS_ASSERT(indexer || ctx.carry, "a layer without an indexer reuses an earlier layer's selection");
  auto s = enter(op);
  const QueryLatent latent = query_latent(op, x);
  const bool cached = !past.empty();
  LightningIndexer::Result sparse = indexer ? indexer->forward(op, x, latent.latent, ctx, cached ? past[2] : nullptr)
                                            : LightningIndexer::Result{ctx.carry, nullptr};
  Value* mask = sparse_attention_mask(op, ctx.mask, sparse.kept, dtype_);
  AttentionResult a = attend(op, x, latent, mask, ctx, cached ? past[0] : nullptr, cached ? past[1] : nullptr);
  MixerResult r{a.hidden, {}, sparse.kept};
  if (cached) r.present = {a.present_key, a.present_value};
  if (cached && indexer) r.present.push_back(sparse.present_keys);
  return r;
}

}  // namespace mobius
