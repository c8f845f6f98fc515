// Self-attention with KV cache: MHA, GQA and MQA (num_key_value_heads <= num_attention_heads),
// explicit head_dim, optional q/k/v/o bias, optional per-head q/k RMSNorm (Qwen3), RoPE.
// Reference: LlamaAttention / Qwen3Attention in transformers/models/*/modeling_*.py.
// Lowered to the ONNX Attention op (opset 23/24) with an additive float mask.
#pragma once

#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/rope.h"

namespace mobius {

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
};

// Per-graph inputs shared by all layers.
struct AttentionContext {
  Value* mask;       // additive float mask [batch, 1, seq, total_seq]
  RopeTables rope;
};

struct AttentionResult {
  Value* hidden;         // [batch, seq, hidden_size]
  Value* present_key;    // [batch, kv_heads, total_seq, head_dim]
  Value* present_value;
};

class Attention : public Module {
 public:
  explicit Attention(const AttentionOptions& o);
  // x: [batch, seq, hidden_size]; past_key/past_value: [batch, kv_heads, past_seq, head_dim].
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

}  // namespace mobius
