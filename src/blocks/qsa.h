// Qwen4-Exp's QSA attention (transformers/models/qwen4_exp/modeling_qwen4_exp.py, 5.23:
// Qwen4ExpTextQSAIndexer, Qwen4ExpTextAttention): Qwen3.5's gated attention (blocks/attention.h
// gate_in_q_proj, q_norm / k_norm by (1 + weight)) whose mask keeps, per query, the tokens of the
// best-scored complete blocks of compress_ratio visible keys and the tokens after the last complete
// block. The indexer, from the layer input x [batch, seq, hidden]:
//   [q | k] = index_qk_proj(x): q [heads, head_dim] per token, k one raw key [head_dim] per token,
//     appended to the layer's indexer key cache (keys not normalized, not rotated)
//   q       = q_layernorm(q) (RMSNorm by 1 + weight), rotated at the query positions with the
//             attention's RoPE tables on their first rotary_dim channels (rotate_half)
//   blocks  the visible keys (the causal / padding mask's allowed entries) in cache order, cut into
//           blocks of compress_ratio; block b's key = k_layernorm(mean of its raw keys, float32),
//           rotated at position b * compress_ratio (the position id of its first token when
//           position_ids count a row's visible tokens, as transformers' generate and its padded
//           batches give them; position_ids = cache index without padding)
//   score   = sum_h relu(q_h . key_b) / sqrt(head_dim), in float32, over the query's complete
//             blocks (those whose compress_ratio tokens the query sees)
//   keep    = the tokens of the min(budget / compress_ratio, complete blocks) best blocks (TopK;
//             ties: ONNX TopK's lower block first) and the query's visible tokens after its last
//             complete block
//   mask    = the attention mask where kept, the dtype's lowest value elsewhere (blocks/dsa.h
//             sparse_attention_mask, as transformers' masked_fill(~selected, finfo.min))
// transformers loops over rows and queries; the selection per query is the same here with the
// visible tokens' ranks (a query's visible keys are the first of its row's visible keys: a causal
// mask with padding).
// States: the attention's cache, then an attention_side state "indexer_keys" [batch_size,
// past_sequence_length, head_dim] appended on axis 1 (transformers' DynamicIndexedLayer
// update_indexer). The attention is tagged like every Attention; the group_query_attention pass
// gives the sparse mask as attention_bias (causal 0), so --ep cpu stays exact.
#pragma once

#include "blocks/attention.h"
#include "blocks/norms.h"
#include "blocks/rope.h"

namespace mobius {

struct QsaIndexerOptions {
  int64_t hidden_size;
  int64_t num_heads;       // indexer_n_heads
  int64_t head_dim;        // indexer_head_dim (>= rope.rotary_dim())
  int64_t budget;          // indexer_budget: a multiple of compress_ratio
  int64_t compress_ratio;  // indexer_compress_ratio
  float norm_eps = 1e-6f;  // rms_norm_eps
  RopeConfig rope;         // the attention's (the block keys' tables)
  DataType dtype = DataType::FLOAT;
};

// Qwen4ExpTextQSAIndexer: the selection of one layer, and its key cache.
class QsaIndexer : public Module {
 public:
  // Throws mobius::Error (MOBIUS_ASSERT) for sizes out of range.
  explicit QsaIndexer(const QsaIndexerOptions& o);

  struct Result {
    Value* kept;          // bool [batch, 1, seq, total_seq]: the selected keys
    Value* present_keys;  // [batch, total_seq, head_dim]
  };
  // x: [batch, seq, hidden_size]; ctx.mask [batch, 1, seq, total_seq] (additive: 0 where
  // allowed), ctx.rope at the step's positions; past_keys [batch, past_seq, head_dim] or null
  // without a cache (total_seq = seq).
  Result forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_keys) const;
  // "indexer_keys" [batch_size, past_sequence_length, head_dim], appended on axis 1.
  StateTensor state() const;

  Linear* index_qk_proj;
  Norm *q_layernorm, *k_layernorm;

 private:
  QsaIndexerOptions o_;
};

// Qwen4ExpTextAttention: Attention(a) under the indexer's mask. States: the attention's cache,
// then an attention_side state with the indexer keys.
class QsaAttention : public Attention {
 public:
  QsaAttention(const AttentionOptions& a, const QsaIndexerOptions& i);
  LayerStates states() const override;
  // past: {key, value, indexer_keys} or none; present likewise.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  QsaIndexer* indexer;

 private:
  DataType dtype_;
};

}  // namespace mobius
