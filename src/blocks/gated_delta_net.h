// The gated DeltaNet token mixer (transformers/models/qwen3_next/modeling_qwen3_next.py
// Qwen3NextGatedDeltaNet; its torch path, torch_chunk_gated_delta_rule for a prompt and
// torch_recurrent_gated_delta_rule for one token, is the specification; Qwen3.5's
// Qwen3_5GatedDeltaNet, models/qwen3_5/modeling_qwen3_5.py, and OLMo-Hybrid's
// OlmoHybridGatedDeltaNet, models/olmo_hybrid/modeling_olmo_hybrid.py, with other projections;
// Kimi Linear's Kimi Delta Attention, models/kimi_linear/modeling_kimi_linear.py
// KimiLinearDeltaAttention, chunk_kimi_delta_attention / recurrent_kimi_delta_attention, with a
// per-channel forget gate and a sigmoid output gate, GatedDeltaNetProjections::kimi below):
//   x [batch, seq, hidden] * token_mask -> q, k [Hk, Dk], v, z [Hv, Dv], b, a [Hv] by the
//     projections of GatedDeltaNetProjections; R = Hv / Hk
//   [q | k | v] (all heads) -> depthwise causal conv1d (kernel K, no bias; blocks/mamba.h
//     causal_conv1d) -> hidden_act -> q, k [Hk, Dk], v [Hv, Dv]; value head h reads key head h / R
//   beta = beta_scale * sigmoid(b);  g = -exp(A_log) * softplus(a + dt_bias)  [Hv]
//   q, k L2-normalized (x * rsqrt(sum x^2 + 1e-6)), q * Dk^-0.5; then per token, S [Hv, Dk, Dv]:
//     S = exp(g_t) S;  S += k_t (beta_t (v_t - k_t^T S))^T;  o_t = q_t^T S
//   o -> gated RMSNorm per value head (norm.weight [Dv], eps norm_eps) * silu(z) -> out_proj
//   (OLMo-Hybrid's names: z is g_proj's, the norm o_norm, out_proj o_proj)
// Kimi Delta Attention (GatedDeltaNetProjections::kimi; Hk = Hv = H, Dk = Dv = D): the forget gate
// per key channel, g [H, D] = -exp(A_log) (per head) * softplus(f_b_proj(f_a_proj(x)) + dt_bias),
// so S = diag(exp(g_t)) S decays each key row of S by its own rate (KimiLinearForgetGate); the
// output gate z = g_b_proj(g_a_proj(x)) and KimiLinearRMSNormGated: the norm, its weight and
// sigmoid(z) all in float32 (OutputGate::sigmoid).
// Ling 3.0's (models/bailing_hybrid/modeling_bailing_hybrid.py BailingHybridDeltaAttention,
// GatedDeltaNetProjections::bailing): Kimi's delta rule and output norm, the forget gate's input
// f_proj(x) (BailingHybridForgetGate) and the output gate z = g_proj(x), each one projection; with
// forget_lower_bound (kda_safe_gate) g [H, D] = lower_bound * sigmoid(exp(A_log) * (f + dt_bias)).
// Hk = linear_num_key_heads, Hv = linear_num_value_heads, Dk / Dv = linear_key / value_head_dim,
// K = linear_conv_kernel_dim.
// States (tasks/layer_state.h, replaced every step, in the model dtype), named after transformers'
// cache (conv_states / recurrent_states, one per layer):
//   conv_state [batch_size, 2 Hk Dk + Hv Dv, K - 1]: the last K - 1 conv inputs;
//   recurrent_state [batch_size, Hv, Dk, Dv]: S after the step's last token.
// The delta rule is one ONNX Scan over the step's tokens (float32), so a prompt of any length is
// one graph run (docs/design.md "The state model"). Not the chunked form: each chunk of
// torch_chunk_gated_delta_rule solves a unit lower-triangular system (solve_triangular), which ONNX
// has no op for; its forward substitution is itself a loop of chunk_size steps. The per-token
// recurrence is the chunked form's exact arithmetic reordering (equal to float32 rounding).
#pragma once

#include <optional>
#include <string>

#include "blocks/linear.h"
#include "blocks/token_mixer.h"

namespace mobius {

// The input projections as the checkpoint holds them.
enum class GatedDeltaNetProjections {
  // in_proj_qkvz, viewed per key head as [q (Dk) | k (Dk) | v (R Dv) | z (R Dv)], and in_proj_ba,
  // per key head [b (R) | a (R)] (Qwen3NextGatedDeltaNet.fix_query_key_value_ordering)
  per_key_head,
  // in_proj_qkv [q (Hk Dk) | k (Hk Dk) | v (Hv Dv)], in_proj_z [Hv Dv], in_proj_b, in_proj_a [Hv]
  // (Qwen3_5GatedDeltaNet)
  separate,
  // q_proj, k_proj [Hk Dk], v_proj, g_proj (z) [Hv Dv], b_proj, a_proj [Hv]; the conv's weight
  // as q_conv1d, k_conv1d, v_conv1d [channels, 1, K] (concatenated in the graph); the output's norm
  // o_norm and its projection o_proj (OlmoHybridGatedDeltaNet as save_pretrained writes it: its
  // conversion_mapping concatenates the three convs into conv1d on load)
  unfused,
  // Kimi Delta Attention as save_pretrained writes it (conversion_mapping.py "kimi_linear" moves
  // the forget gate's tensors into forget_gate and concatenates the convs on load): q_proj, k_proj,
  // v_proj [H D]; q_conv1d, k_conv1d, v_conv1d [H D, 1, K]; the forget gate f_a_proj [D, hidden],
  // f_b_proj [H D, D], dt_bias [H D], A_log [1, 1, H, 1]; b_proj [H]; the output gate g_a_proj
  // [D, hidden], g_b_proj [H D, D]; o_norm, o_proj
  kimi,
  // Ling 3.0's Kimi Delta Attention as save_pretrained writes it (conversion_mapping.py
  // "bailing_hybrid" reversed: the forget gate's tensors beside the projections, the convs split,
  // o_proj as dense): q_proj, k_proj, v_proj [H D]; q_conv1d, k_conv1d, v_conv1d [H D, 1, K]; the
  // forget gate f_proj [H D, hidden], dt_bias [H D], A_log [H]; b_proj [H]; the output gate g_proj
  // [H D, hidden]; o_norm, dense
  bailing,
};

// The output norm's gate (the gated RMSNorm after the delta rule, per value head).
enum class OutputGate {
  // Qwen3NextRMSNormGated: weight * normalized (back in the model dtype) * silu(z) in float32
  silu,
  // KimiLinearRMSNormGated (FLA's): normalized * weight * sigmoid(z), all in float32
  sigmoid,
};

struct GatedDeltaNetOptions {
  int64_t hidden_size;
  int64_t num_key_heads;    // Hk, linear_num_key_heads
  int64_t num_value_heads;  // Hv, linear_num_value_heads: a multiple of Hk
  int64_t key_head_dim;     // Dk, linear_key_head_dim
  int64_t value_head_dim;   // Dv, linear_value_head_dim
  int64_t conv_kernel;      // K, linear_conv_kernel_dim: at least 2
  std::string hidden_act = "silu";  // after the conv
  float norm_eps = 1e-6f;           // of the gated RMSNorm (Qwen3-Next: rms_norm_eps; OLMo-Hybrid: 1e-5)
  DataType dtype = DataType::FLOAT;
  GatedDeltaNetProjections projections = GatedDeltaNetProjections::per_key_head;
  // beta = beta_scale * sigmoid(b): 1, or 2 where negative eigenvalues are allowed (OLMo-Hybrid's
  // linear_allow_neg_eigval: beta in [0, 2])
  float beta_scale = 1.0f;
  OutputGate output_gate = OutputGate::silu;
  // The per-key-channel forget gate (kimi, bailing) of a = f + dt_bias: none: g = -exp(A_log) *
  // softplus(a); a value (BailingHybridForgetGate with kda_safe_gate, kda_lower_bound):
  // g = lower_bound * sigmoid(exp(A_log) * a)
  std::optional<float> forget_lower_bound;
  int64_t key_dim() const { return num_key_heads * key_head_dim; }
  int64_t value_dim() const { return num_value_heads * value_head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
};

class GatedDeltaNetMixer : public TokenMixer {
 public:
  // Throws mobius::FieldError for sizes out of range (blocks/spec_check.h check_gated_delta_net).
  explicit GatedDeltaNetMixer(const GatedDeltaNetOptions& o);
  LayerStates states() const override;  // one recurrent state {conv_state, recurrent_state}
  // x: [batch, seq, hidden]; ctx.token_mask [batch, seq] (required); past {conv_state,
  // recurrent_state}. Returns [batch, seq, hidden] and the two states after the step.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  Linear *in_proj_qkvz = nullptr, *in_proj_ba = nullptr;  // GatedDeltaNetProjections::per_key_head
  Linear *in_proj_qkv = nullptr, *in_proj_z = nullptr, *in_proj_b = nullptr, *in_proj_a = nullptr;  // separate
  Linear *q_proj = nullptr, *k_proj = nullptr, *v_proj = nullptr, *g_proj = nullptr, *b_proj = nullptr,
         *a_proj = nullptr;  // unfused (kimi: q_proj, k_proj, v_proj, b_proj)
  Linear *f_a_proj = nullptr, *f_b_proj = nullptr, *g_a_proj = nullptr, *g_b_proj = nullptr;  // kimi
  Linear* f_proj = nullptr;  // bailing (with q_proj, k_proj, v_proj, g_proj, b_proj)
  Linear* out_proj;            // out_proj (unfused, kimi: o_proj; bailing: dense)
  Parameter* conv_weight = nullptr;  // conv1d.weight [conv_dim, 1, K] (unfused, kimi: null)
  Parameter *q_conv_weight = nullptr, *k_conv_weight = nullptr, *v_conv_weight = nullptr;  // unfused, kimi, bailing
  Parameter *dt_bias, *A_log;  // [Hv] each (kimi: [H D] and [1, 1, H, 1]; bailing: [H D] and [H])
  Parameter* norm_weight;      // norm.weight (unfused: o_norm.weight) [Dv]

 private:
  // The projections of x [batch, seq, hidden]: [q | k | v] [batch, seq, conv_dim] (the conv's
  // input), z [batch, seq, Hv, Dv], b [batch, seq, Hv] and a [batch, seq, Hv] (kimi: the forget
  // gate's f_b_proj output [batch, seq, H D]).
  struct Projected {
    Value *qkv, *z, *b, *a;
  };
  Projected project(Ops& op, Value* x) const;
  // The delta rule from S0 [batch, Hv, Dk, Dv] (float32): q, k [batch, seq, Hv, Dk] (normalized,
  // q scaled), v [batch, seq, Hv, Dv], decay exp(g) [batch, seq, Hv] (kimi, bailing: [batch, seq, Hv, Dk],
  // one rate per key row of S) and beta [batch, seq, Hv] -> o [batch, seq, Hv, Dv] and the last S.
  std::pair<Value*, Value*> scan(Ops& op, Value* s0, Value* q, Value* k, Value* v, Value* decay, Value* beta) const;
  GatedDeltaNetOptions o_;
};

}  // namespace mobius
