// DeepSeek sparse attention (DSA, DeepSeek-V3.2; DeepseekV32Indexer / DeepseekV32Attention in
// transformers/models/deepseek_v32/modeling_deepseek_v32.py, 5.23): multi-head latent attention
// (blocks/mla.h) whose mask keeps, per query, only the index_topk keys a lightweight indexer
// scores highest. The indexer (a mask producer, LightningIndexer below), from the layer input x
// and the MLA's query latent q_latent = q_a_layernorm(q_a_proj(x)):
//   q       = wq_b(q_latent) per head [index_n_heads, index_head_dim]
//   k       = k_norm(wk(x)) [index_head_dim], one head (LayerNorm, eps 1e-6, with bias)
//   q, k    rotated on their first qk_rope_head_dim channels with the MLA's RoPE tables:
//           rotate_half (DeepSeek-V3.2) or adjacent pairs (GlmMoeDsaIndexer's interleaved RoPE,
//           whose [evens | odds] output we keep interleaved: q and k alike, the same q.k); k
//           appended to the layer's indexer key cache
//   score   = sum_h weights_proj(x)_h * n_heads^-0.5 * relu(q_h . k * index_head_dim^-0.5)
//             + the causal / padding mask, in float32 (transformers' q.float(), k.float(), and
//             weights_proj kept in float32: _keep_in_fp32_modules)
//   keep    = the min(index_topk, total_seq) largest scores per query (TopK; ties: ONNX TopK's
//             lower key index first). When fewer keys are allowed than index_topk, TopK also
//             picks masked keys, as torch.topk does; they stay masked below.
//   mask    = the attention mask where kept, the dtype's lowest value elsewhere (transformers'
//             attention_mask.masked_fill(~kept, finfo.min)), then the MLA's attention.
// GLM-MoE-DSA (glm_moe_dsa/modular_glm_moe_dsa.py GlmMoeDsaAttention): a "shared" layer has no
// indexer and reuses the key selection of the last earlier layer with one (AttentionContext::carry,
// which every SparseLatentAttention hands on as MixerResult::carry).
// The indexer keys are a second per-layer state beside the MLA's KV cache: "indexer_keys"
// [batch, past_sequence_length, index_head_dim], appended along axis 1 (transformers'
// DynamicIndexedLayer.indexer_keys, cache_utils.py). The attention stays the canonical ONNX
// Attention under every --ep (MLA's is untagged: passes/group_query_attention.cpp), so the sparse
// mask applies exactly.
#pragma once

#include "blocks/mla.h"

namespace mobius {

struct IndexerOptions {
  int64_t hidden_size;
  int64_t q_lora_rank;  // the MLA's: wq_b reads its query latent
  int64_t num_heads;    // index_n_heads
  int64_t head_dim;     // index_head_dim
  int64_t rope_dim;     // qk_rope_head_dim (<= head_dim)
  int64_t topk;         // index_topk
  bool rope_interleave = false;  // rotate adjacent pairs (GLM-MoE-DSA), not halves (DeepSeek-V3.2)
  DataType dtype = DataType::FLOAT;
};

// DeepseekV32Indexer: the sparse mask of one layer, and its key cache.
class LightningIndexer : public Module {
 public:
  explicit LightningIndexer(const IndexerOptions& o);

  struct Result {
    Value* kept;          // bool [batch, 1, seq, total_seq]: the selected keys
    Value* present_keys;  // [batch, total_seq, head_dim]
  };
  // x: [batch, seq, hidden_size]; q_latent: [batch, seq, q_lora_rank]; ctx.mask [batch, 1, seq,
  // total_seq] and ctx.rope (qk_rope_head_dim channels); past_keys: [batch, past_seq, head_dim], or
  // null without a cache (total_seq = seq).
  Result forward(Ops& op, Value* x, Value* q_latent, const AttentionContext& ctx, Value* past_keys) const;
  // The key cache: "indexer_keys" [batch_size, past_sequence_length, head_dim], appended on axis 1.
  StateTensor state() const;

  Linear *wq_b, *wk, *weights_proj;  // weights_proj: float32 weights
  Norm* k_norm;

 private:
  IndexerOptions o_;
};

// The additive attention mask [batch, 1, seq, total_seq] keeping the selected keys (`kept`, bool,
// same shape) of `mask`: mask where kept, the lowest value of `dtype` elsewhere.
Value* sparse_attention_mask(Ops& op, Value* mask, Value* kept, DataType dtype);

// DeepseekV32Attention: the MLA with the indexer's mask. States: the MLA's KV cache, then an
// attention_side state holding the indexer keys (LightningIndexer::state()); without an indexer (a
// GLM-MoE-DSA "shared" layer) the KV cache alone, the mask from ctx.carry. Hands its selection on
// (MixerResult::carry).
class SparseLatentAttention : public MultiHeadLatentAttention {
 public:
  // m.q_lora_rank is required (the indexer reads the query latent) and equals i->q_lora_rank;
  // i none: a layer reusing the last earlier selection.
  SparseLatentAttention(const MLAOptions& m, const std::optional<IndexerOptions>& i);
  LayerStates states() const override;
  // (forward(), SelfAttention's, stays the MLA's alone: the decoder calls mix().)
  // past: {key, value, indexer_keys} ({key, value} without an indexer) or none; present likewise.
  // Throws mobius::Error (MOBIUS_ASSERT) on a layer without an indexer when no earlier layer
  // handed a selection on.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  LightningIndexer* indexer = nullptr;  // null: a "shared" layer

 private:
  DataType dtype_;
};

}  // namespace mobius
