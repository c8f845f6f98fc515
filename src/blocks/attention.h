// Self-attention: MHA, GQA and MQA (num_key_value_heads <= num_attention_heads), explicit
// head_dim, optional q/k/v/o bias, optional per-head q/k RMSNorm (Qwen3), optional RoPE, with a
// KV cache (decoders) or without one (encoders).
// References: LlamaAttention / Qwen3Attention, and for encoders BertSelfAttention + the dense of
// BertSelfOutput, in transformers/models/*/modeling_*.py.
// Lowered to the ONNX Attention op (opset 23/24) with an additive float mask.
#pragma once

#include <string>

#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/rope.h"

namespace mobius {

// Child names of the four projections, as the checkpoint spells them (dotted names nest, e.g.
// BERT's "self.query" and "output.dense" under the layer's "attention").
struct AttentionNames {
  std::string q_proj = "q_proj";
  std::string k_proj = "k_proj";
  std::string v_proj = "v_proj";
  std::string o_proj = "o_proj";
};

struct AttentionOptions {
  int64_t hidden_size;
  int64_t num_attention_heads;
  int64_t num_key_value_heads;
  int64_t head_dim;
  bool qkv_bias = false;
  bool o_bias = false;
  bool qk_norm = false;       // RMSNorm over head_dim on q and k, before RoPE
  float norm_eps = 1e-6f;
  std::optional<float> scale;  // default 1 / sqrt(head_dim)
  DataType dtype = DataType::FLOAT;
  AttentionNames names;
};

// Per-graph inputs shared by all layers.
struct AttentionContext {
  Value* mask;          // additive float mask [batch, 1, seq, total_seq]
  RopeTables rope = {};  // cos == nullptr: no RoPE (absolute-position models)
};

struct AttentionResult {
  Value* hidden;         // [batch, seq, hidden_size]
  Value* present_key;    // [batch, kv_heads, total_seq, head_dim]; null without a cache
  Value* present_value;
};

class Attention : public Module {
 public:
  explicit Attention(const AttentionOptions& o);
  // x: [batch, seq, hidden_size]; past_key/past_value: [batch, kv_heads, past_seq, head_dim], or
  // both null for attention without a cache (then total_seq = seq and no present is returned).
  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                          Value* past_value) const;

  Linear *q_proj, *k_proj, *v_proj, *o_proj;
  RMSNorm *q_norm = nullptr, *k_norm = nullptr;

 private:
  // [batch, seq, heads * head_dim] -> [batch, heads, seq, head_dim], with the optional norm.
  Value* split_heads(Ops& op, Value* x, int64_t heads, const RMSNorm* norm) const;
  AttentionOptions o_;
};

// The additive mask for causal attention over a left-padded batch with a KV cache:
// 0 where key j may be attended by query i, the dtype's lowest value elsewhere. Query i sits at
// cache index past + i (past = total_seq - seq). `sliding_window` > 0 also masks keys with
// j <= past + i - sliding_window (transformers' sliding_window_overlay).
// attention_mask: int64 [batch, total_seq]; input_ids: [batch, seq].
// Returns [batch, 1, seq, total_seq] in `dtype`.
Value* causal_mask(Ops& op, Value* attention_mask, Value* input_ids, DataType dtype,
                   int64_t sliding_window = 0);

// The additive mask for bidirectional attention over a padded batch (transformers'
// create_bidirectional_mask): 0 where key j is a token (attention_mask 1), the dtype's lowest
// value where it is padding, the same for every query.
// attention_mask: int64 [batch, seq]. Returns [batch, 1, seq, seq] in `dtype`: the query axis is
// expanded because onnxruntime's Attention kernel (1.31, attention_helper.h) requires the mask's
// second-to-last dim to equal the query length, although the ONNX spec allows broadcasting.
Value* padding_mask(Ops& op, Value* attention_mask, DataType dtype);

}  // namespace mobius
