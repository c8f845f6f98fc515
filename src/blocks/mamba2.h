// The Mamba-2 token mixer (transformers/models/mamba2/modeling_mamba2.py Mamba2Mixer; its torch
// path, mamba2_chunk_scan and mamba2_selective_state_update, is the specification): a state-space
// duality (SSD) layer whose decay is one scalar per head.
//   x [batch, seq, hidden] * token_mask -> in_proj -> (z [I], xBC [I + 2 G N], dt [H])
//   xBC -> depthwise causal conv1d (blocks/mamba.h causal_conv1d) -> hidden_act -> * token_mask
//       -> (x [H, P], B [G, N], C [G, N]); head h reads group h / (H / G)
//   dt = clamp(softplus(dt + dt_bias), time_step_limit);  a = dt * A,  A = -exp(A_log) [H]
//   h_t = exp(a_t) h_{t-1} + dt_t x_t B_t^T  [H, P, N];  y_t = h_t C_t + D x_t
//   y -> gated RMSNorm (y * silu(z), normalized in G groups, * norm.weight) -> out_proj
//   (Mamba2Gate: Falcon-H1's norm before the gate, or the gate alone; its mup multipliers scale
//   in_proj's output parts, Mamba2Options::projection_multipliers)
// I = intermediate_size = expand * hidden_size = H * P; H = num_heads, P = head_dim,
// G = n_groups, N = state_size.
// States (tasks/layer_state.h, replaced every step, in the model dtype):
//   conv_state [batch_size, I + 2 G N, K - 1]; recurrent_state [batch_size, H, P, N].
// The scan is SSD's chunked form (transformers' mamba2_chunk_scan), with S = cumsum(a) within each
// chunk of Q = min(chunk_size, the step's length) tokens (the step's tokens zero-padded to a multiple
// of Q: a padded token has a = 0 and x = 0, so it changes nothing; a decode step is one chunk of one
// token, not chunk_size):
//   within a chunk: y_t = sum_{s<=t} (C_t . B_s) exp(S_t - S_s) dt_s x_s (exp of a difference
//     masked to s <= t before the exponential, as transformers' segment_sum);
//   a chunk's own state: sum_s exp(S_Q - S_s) dt_s x_s B_s^T; the states at the chunk starts from
//     h0 and those by one product with exp(T_c - T_z), T the cumulative chunk decays;
//   y_t += exp(S_t) C_t . (the state at the chunk's start);  y_t += D x_t.
// Standard ops, one graph run for a prompt of any length (docs/design.md "The state model"):
// [batch, heads, seq, chunk] scores per layer, not [seq, seq].
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/token_mixer.h"

namespace mobius {

// How the scan's output y [batch, seq, I] meets the gate z before out_proj (in float32).
enum class Mamba2Gate {
  norm_after_gate,   // RMSNorm(y * silu(z)) in G groups, * norm.weight (MambaRMSNormGated; Falcon-H1's
                     // FalconH1RMSNormGated with mamba_norm_before_gate false)
  norm_before_gate,  // RMSNorm(y) in G groups * norm.weight * silu(z) (FalconH1RMSNormGated,
                     // mamba_norm_before_gate true)
  gate_only,         // y * silu(z): no norm, no norm.weight (Falcon-H1 with mamba_rms_norm false)
};

struct Mamba2Options {
  int64_t hidden_size;
  int64_t num_heads;   // H
  int64_t head_dim;    // P; H * P = expand * hidden_size
  int64_t n_groups;    // G, divides H
  int64_t state_size;  // N
  int64_t conv_kernel;  // K, at least 2
  int64_t chunk_size = 256;  // tokens per SSD chunk
  bool use_bias = false;
  bool use_conv_bias = true;
  std::string hidden_act = "silu";
  float layer_norm_epsilon = 1e-5f;  // of the gated RMSNorm
  float time_step_min = 0.0f;        // time_step_limit
  float time_step_max = std::numeric_limits<float>::infinity();
  DataType dtype = DataType::FLOAT;
  Mamba2Gate gate = Mamba2Gate::norm_after_gate;
  // Five multipliers of in_proj's output parts z, x, B, C and dt (Falcon-H1's ssm_multipliers, its
  // mup_vector), in the model dtype; empty: none
  std::vector<float> projection_multipliers = {};
  std::optional<bool> out_proj_bias = std::nullopt;  // out_proj's bias when not use_bias (Falcon-H1: projectors_bias)
  int64_t intermediate_size() const { return num_heads * head_dim; }
  int64_t conv_dim() const { return intermediate_size() + 2 * n_groups * state_size; }
};

class Mamba2Mixer : public TokenMixer {
 public:
  // Throws mobius::FieldError for sizes out of range (blocks/spec_check.h check_mamba2).
  explicit Mamba2Mixer(const Mamba2Options& o);
  LayerStates states() const override;  // one recurrent state {conv_state, recurrent_state}
  // x: [batch, seq, hidden]; ctx.token_mask [batch, seq] (required); past {conv_state,
  // recurrent_state}. Returns [batch, seq, hidden] and the two states after the step.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  Linear *in_proj, *out_proj;
  Parameter* conv_weight;          // conv1d.weight [conv_dim, 1, K]
  Parameter* conv_bias = nullptr;  // conv1d.bias [conv_dim]
  Parameter *dt_bias, *A_log, *D;  // [H] each
  Parameter* norm_weight = nullptr;  // norm.weight [I]; none for Mamba2Gate::gate_only

 private:
  Mamba2Options o_;
};

}  // namespace mobius
