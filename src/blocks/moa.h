// Mixture of attention heads (JetMoE, arXiv:2404.07413; JetMoeAttention / JetMoeMoA in
// transformers/models/jetmoe/modeling_jetmoe.py, 5.23): keys and values come from one shared
// kv_proj [2 * kv_heads * head_dim, hidden]; each expert e owns a query projection
// experts.input_linear[e] and an output projection experts.output_linear[e], and the router
// (experts.router.layer, top-k logits then softmax) picks top_k of them per token:
//   y = sum over picked e of gate_e * output_linear[e](attention(input_linear[e](x), k, v)) + experts.bias
// Evaluated densely like blocks/moe.h: every expert's queries attend (num_experts * kv_heads query
// heads against kv_heads kv heads) and the routing matrix R [tokens, E] (0 for unpicked experts)
// weights the outputs; this costs E / top_k times the query-side attention of a sparse dispatch.
// KV cache: [batch, kv_heads, seq, head_dim], as transformers caches it.
#pragma once

#include "blocks/attention.h"
#include "blocks/moe_router.h"

namespace mobius {

struct MoAOptions {
  int64_t hidden_size;
  int64_t num_key_value_heads;
  int64_t head_dim;       // kv_channels
  RouterOptions router;   // num_experts, top_k; kind, hidden_size, dtype are set from the rest
  DataType dtype = DataType::FLOAT;
};

class MixtureOfAttentionHeads : public SelfAttention {
 public:
  explicit MixtureOfAttentionHeads(const MoAOptions& o);
  // x: [batch, seq, hidden_size]; past_key/past_value: [batch, kv_heads, past_seq, head_dim].
  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                          Value* past_value) const override;
  LayerState state() const override { return {StateKind::self_kv, o_.num_key_value_heads, o_.head_dim}; }

  MoERouter* router;
  Linear* kv_proj;
  Parameter *input_linear, *output_linear, *bias;

 private:
  MoAOptions o_;
};

}  // namespace mobius
