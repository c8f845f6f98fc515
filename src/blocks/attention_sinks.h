// Scaled dot-product attention with attention sinks (GPT-OSS): each head h has a learned logit
// sinks[h] that joins the softmax denominator as an extra column and is then dropped, so a query
// may give part of its attention to "nothing":
//   p = softmax([q.k_j * scale + mask_j for j in keys] ++ [sinks[h]])[:-1];  y = p @ v
// Reference: eager_attention_forward in transformers/models/gpt_oss/modeling_gpt_oss.py (5.23).
// The ONNX Attention op has no such column, so this is written in primitives (MatMul, Add,
// Concat, Softmax, Slice); GQA without copying k/v: the query heads are viewed as
// [batch, kv_heads, heads / kv_heads, seq, head_dim] against k/v [batch, kv_heads, 1, total, *].
#pragma once

#include "builder/ops.h"

namespace mobius {

struct SinkAttentionSizes {
  int64_t num_heads;
  int64_t num_kv_heads;  // divides num_heads; query head h reads kv head h / (num_heads / num_kv_heads)
  int64_t head_dim;      // of q and k (and v, unless value_head_dim)
  float scale;
  int64_t value_head_dim = 0;  // of v where it differs (MiMo-V2-Flash); 0: head_dim
};

// q: [batch, num_heads, seq, head_dim]; k, v: [batch, num_kv_heads, seq, head_dim] (v's last axis
// value_head_dim when set); mask: additive [batch, 1, seq, total_seq]; past_key/past_value: [batch,
// num_kv_heads, past, head_dim] (both null without a cache: an encoder, archs/openai_privacy_filter.cpp);
// sinks: [num_heads]. Returns y [batch, num_heads, seq, value head size] and the present k/v
// (past ++ new along the sequence axis), all in q's dtype.
AttentionOutputs attention_with_sinks(Ops& op, Value* q, Value* k, Value* v, Value* mask,
                                      Value* past_key, Value* past_value, Value* sinks,
                                      const SinkAttentionSizes& n);

}  // namespace mobius
