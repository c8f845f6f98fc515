// Differential attention (DiffLlamaAttention, transformers/models/diffllama/modeling_diffllama.py,
// 5.23; arXiv:2410.05258). q, k, v as Llama's (q_proj / k_proj / v_proj, RoPE on q and k, the KV
// cache of the plain keys and values, kv_heads of head_dim). The kv heads split in two halves
// v_a, v_b; query head i (kv head j = i / (heads / kv_heads)) attends with one softmax P_i to
//   o_i = [P_i v_a[j mod kv/2] | P_i v_b[j mod kv/2]]                    [2 * head_dim]
// (transformers' two attention calls over v_a and v_b each tiled twice, concatenated). The heads
// then pair up: head h of the first half with head h of the second,
//   y_h = RMSNorm(o_h - lambda * o_{h + heads/2}) * (1 - lambda_init)   (no weight, eps norm_eps)
//   lambda = exp(sum(lambda_q1 * lambda_k1)) - exp(sum(lambda_q2 * lambda_k2)) + lambda_init
// and o_proj maps the heads/2 outputs of 2 * head_dim back to hidden_size. One ONNX Attention op
// with a value head of 2 * head_dim; the cache is concatenated in the graph.
#pragma once

#include "blocks/attention.h"

namespace mobius {

struct DiffAttentionOptions {
  // hidden_size, heads, kv heads (even), head_dim, qkv_bias / o_bias, norm_eps (the group norm's),
  // dtype; the other fields are not read
  AttentionOptions attention;
  float lambda_init;  // 0.8 - 0.6 * exp(-0.3 * layer): DiffLlama's lambda_init_fn
};

// Parameters: q_proj, k_proj, v_proj, o_proj (Linear, bias per qkv_bias / o_bias); lambda_q1,
// lambda_k1, lambda_q2, lambda_k2 [head_dim].
class DifferentialAttention : public SelfAttention {
 public:
  // Odd kv heads (or heads not a multiple of kv heads) are internal errors: the architecture
  // checks the config fields.
  explicit DifferentialAttention(const DiffAttentionOptions& o);
  // x: [batch, seq, hidden]; past_key / past_value: [batch, kv_heads, past_seq, head_dim] or both
  // null. Returns the output and the cache with the step appended (null without a past).
  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                          Value* past_value) const override;
  LayerState state() const override {
    return {StateKind::self_kv, o_.attention.num_key_value_heads, o_.attention.head_dim};
  }

  Linear *q_proj, *k_proj, *v_proj, *o_proj;
  Parameter *lambda_q1, *lambda_k1, *lambda_q2, *lambda_k2;
  Norm* groupnorm;  // RMSNorm over 2 * head_dim without a weight (no parameters)

 private:
  DiffAttentionOptions o_;
};

}  // namespace mobius
