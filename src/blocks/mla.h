// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434; DeepseekV2Attention /
// DeepseekV3Attention in transformers/models/deepseek_v{2,3}/modeling_deepseek_v{2,3}.py, 5.23):
//   q        = q_b_proj(q_a_layernorm(q_a_proj(x)))  (or q_proj(x) without q_lora_rank)
//              per head: [q_nope (qk_nope_head_dim) | q_rot (qk_rope_head_dim)]
//   latent, k_rot = kv_a_proj_with_mqa(x) split [kv_lora_rank | qk_rope_head_dim]
//   k_nope, v = kv_b_proj(kv_a_layernorm(latent)) per head, split [qk_nope_head_dim | v_head_dim]
//   k        = [k_nope | rope(k_rot)], k_rot shared by all heads;  q = [q_nope | rope(q_rot)]
//   y        = o_proj(softmax(q.k * scale + mask) v)
//   (head_gate: each head's output times sigmoid(g_proj(x)) [num_heads], in float32, before o_proj:
//   BailingHybridAttention, models/bailing_hybrid/modeling_bailing_hybrid.py)
//   (latent_scale: the normed latent times it before kv_b_proj, so k_nope and v alike:
//   LongcatFlashMLA's mla_scale_kv_lora, models/longcat_flash/modeling_longcat_flash.py)
//   (q_gate: q_gate_proj([q_a_layernorm(c) | c]), c = q_a_proj(x), gives each head its query and a
//   gate [v_head_dim]: per head [q (qk_nope_head_dim + qk_rope_head_dim) | gate (v_head_dim)]; each
//   head's output times sigmoid(gate), in float32, before o_proj: AXK2Attention,
//   models/axk2/modular_axk2.py; saved as q_b_proj [num_heads * (qk + v_head_dim), 2 * q_lora_rank],
//   conversion_mapping.py's "axk2" renaming)
// RoPE acts on the rope channels only; rope_interleave rotates adjacent pairs (2i, 2i + 1)
// (V2's complex multiplication, V3's rope_interleave). V3 returns those channels de-interleaved
// ([evens | odds]); we keep them interleaved, which permutes q and k alike and leaves every
// q.k product, hence the output, unchanged.
//
// KV cache: the expanded per-head keys and values, as the ONNX Attention op consumes them:
//   key [batch, num_heads, seq, qk_nope_head_dim + qk_rope_head_dim], value [..., v_head_dim].
// transformers caches the compressed latent (kv_a_layernorm output, kv_lora_rank) and k_rot
// instead and re-expands every step. Ours is larger by num_heads * (qk_head_dim + v_head_dim) /
// (kv_lora_rank + qk_rope_head_dim) (about 71x for DeepSeek-V3) but costs no kv_b_proj over the
// whole history per decoding step.
#pragma once

#include <optional>
#include <string>

#include "blocks/attention.h"

namespace mobius {

struct MLAOptions {
  int64_t hidden_size;
  int64_t num_heads;
  std::optional<int64_t> q_lora_rank;  // absent: q_proj
  int64_t kv_lora_rank;
  int64_t qk_nope_head_dim;
  int64_t qk_rope_head_dim;
  int64_t v_head_dim;
  bool attention_bias = false;  // q_a_proj, kv_a_proj_with_mqa, o_proj
  bool rope_interleave = false;
  float scale;                  // qk_head_dim ** -0.5, times yarn's mscale ** 2
  float lora_norm_eps = 1e-6f;  // q_a_layernorm, kv_a_layernorm
  bool head_gate = false;       // g_proj [num_heads, hidden], no bias (Ling 3.0's output gate)
  float latent_scale = 1.0f;    // kv_a_layernorm(latent) * latent_scale (LongCat-Flash); 1: none
  bool q_gate = false;          // q_gate_proj (saved as q_b_proj) over both latents (A.X-K2; needs q_lora_rank)
  std::string o_proj_name = "o_proj";  // dense (Ling 3.0's as save_pretrained writes it)
  DataType dtype = DataType::FLOAT;
};

class MultiHeadLatentAttention : public SelfAttention {
 public:
  explicit MultiHeadLatentAttention(const MLAOptions& o);
  // x: [batch, seq, hidden_size]; past_key [batch, num_heads, past, qk head], past_value
  // [batch, num_heads, past, v_head_dim]; ctx.rope covers qk_rope_head_dim channels (empty: no
  // RoPE, those channels used as they are: KimiLinearAttention).
  AttentionResult forward(Ops& op, Value* x, const AttentionContext& ctx, Value* past_key,
                          Value* past_value) const override;
  LayerState state() const override {
    return {StateKind::self_kv, o_.num_heads, o_.qk_nope_head_dim + o_.qk_rope_head_dim, o_.v_head_dim};
  }

  Linear *q_proj = nullptr, *q_a_proj = nullptr, *q_b_proj = nullptr, *q_gate_proj = nullptr;
  RMSNorm* q_a_layernorm = nullptr;
  Linear *kv_a_proj_with_mqa, *kv_b_proj, *o_proj;
  Linear* g_proj = nullptr;  // head_gate
  RMSNorm* kv_a_layernorm;

 protected:
  // The query latent: compressed = q_a_proj(x) and latent = q_a_layernorm(compressed), each
  // [batch, seq, q_lora_rank] (with q_lora_rank only; both null without), in the caller's scope.
  struct QueryLatent {
    Value* latent = nullptr;
    Value* compressed = nullptr;
  };
  QueryLatent query_latent(Ops& op, Value* x) const;
  // forward() in the caller's scope, from the query latent (none: q_proj(x)) and the additive
  // attention mask [batch, 1, seq, total_seq] (ctx.mask, or a mask derived from it: blocks/dsa.h).
  AttentionResult attend(Ops& op, Value* x, const QueryLatent& q_latent, Value* mask, const AttentionContext& ctx,
                         Value* past_key, Value* past_value) const;

 private:
  // [batch, seq, num_heads * dim] -> [batch, num_heads, seq, dim]
  Value* heads(Ops& op, Value* x, int64_t dim) const;
  MLAOptions o_;
};

}  // namespace mobius
