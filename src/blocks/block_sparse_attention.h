// MiniMax-M3's block-sparse attention (MiniMaxM3VLAttention with its MiniMaxM3VLIndexer,
// transformers/models/minimax_m3_vl/modular_minimax_m3_vl.py, 5.23): self-attention whose mask keeps,
// per query and per key/value head group, only the key blocks a small indexer selects. The indexer
// (a mask producer, BlockIndexer below), from the layer input x:
//   q       = q_norm(q_proj(x)) per head [num_heads (= num_key_value_heads), head_dim]
//   k       = k_norm(k_proj(x)) [head_dim], one head; both norms Gemma's RMSNorm (1 + weight)
//   q, k    rotated with the attention's RoPE tables, as transformers slices them: its first
//           rotary channels when head_dim is at least that many, else the first head_dim entries of
//           cos / sin (cat(freqs, freqs)) over the whole head, rotate_half on head_dim channels; k
//           appended to the layer's indexer key cache
//   score   = q_h . k in float32 (no scale), -inf where the key's cache slot j > the query's
//             position_id (slots, not positions: left padding shifts them, as in transformers)
//   blocks  the keys cut into blocks of block_size cache slots (the last one padded with -inf);
//           a block's score is the max of its keys'; the local_blocks blocks ending at the
//           query's position_id // block_size score +inf
//   keep    the min(topk_blocks, blocks) best blocks per head and query (TopK), less those scoring
//           -inf (transformers' -1 slots); every key of a kept block
//   mask    the attention's additive mask where the query's head group keeps the key, the dtype's
//           lowest value elsewhere (build_block_mask: keep & the causal / padding mask), so the
//           mask is [batch, num_attention_heads, seq, total_seq].
// The indexer keys are a second per-layer state beside the KV cache: "indexer_keys" [batch,
// past_sequence_length, head_dim], appended along axis 1 (MiniMaxM3VLSparseCacheLayer.idx_keys).
#pragma once

#include <optional>

#include "blocks/attention.h"
#include "blocks/linear.h"
#include "blocks/norms.h"

namespace mobius {

struct BlockIndexerOptions {
  int64_t hidden_size;
  int64_t num_heads;     // index_n_heads: one selection per key/value head
  int64_t head_dim;      // index_head_dim
  int64_t block_size;    // index_block_size
  int64_t topk_blocks;   // index_topk_blocks
  int64_t local_blocks;  // index_local_blocks (0: none forced)
  int64_t rotary_dim;    // the attention's rotated channels (its RoPE tables' width * 2)
  float norm_eps = 1e-6f;
  DataType dtype = DataType::FLOAT;
};

// MiniMaxM3VLIndexer: the kept keys of one layer, and its key cache.
class BlockIndexer : public Module {
 public:
  explicit BlockIndexer(const BlockIndexerOptions& o);

  struct Result {
    Value* kept;          // bool [batch, num_heads, seq, total_seq]
    Value* present_keys;  // [batch, total_seq, head_dim]
  };
  // x: [batch, seq, hidden_size]; ctx.rope (the attention's tables) and ctx.position_ids (int64
  // [batch, seq]); past_keys: [batch, past_seq, head_dim], or null without a cache.
  Result forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_keys) const;
  // The key cache: "indexer_keys" [batch_size, past_sequence_length, head_dim], appended on axis 1.
  StateTensor state() const;

  Linear *q_proj, *k_proj;
  Norm *q_norm, *k_norm;

 private:
  // x [batch, heads, seq, head_dim] rotated as the header says
  Value* rotate(Ops& op, Value* x, const RopeTables& rope) const;
  BlockIndexerOptions o_;
};

// MiniMaxM3VLAttention on a "minimax_m3_sparse" layer: Attention(a) under the indexer's mask.
// States: the KV cache, then an attention_side state holding the indexer keys.
class BlockSparseAttention : public Attention {
 public:
  // i.num_heads must equal a.num_key_value_heads.
  BlockSparseAttention(const AttentionOptions& a, const BlockIndexerOptions& i);
  LayerStates states() const override;
  // past: {key, value, indexer_keys} or none; present likewise. Reads ctx.position_ids.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  BlockIndexer* indexer;

 private:
  int64_t num_attention_heads_, num_key_value_heads_;
  DataType dtype_;
};

}  // namespace mobius
