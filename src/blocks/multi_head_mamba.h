// Zamba's multi-head Mamba (selective-scan) token mixer: transformers/models/zamba/modeling_zamba.py
// ZambaMambaMixer (its torch path, mamba_selective_scan / mamba_selective_state_update, is the
// specification). Mamba's mixer (blocks/mamba.h) whose channels are split into heads, each with its
// own x_proj, dt_proj, B and C:
//   x [batch, seq, hidden] * token_mask -> in_proj [2 C], channel 2 c + 0 -> xs, 2 c + 1 -> z
//     (transformers views the projection as [C, 2])
//   xs -> depthwise causal conv1d (blocks/mamba.h causal_conv1d) -> hidden_act -> * token_mask = u,
//     viewed as [heads, P]
//   per head h: (dt [R], B [N], C [N]) = x_proj_weight[h] [R + 2 N, P] @ u_h;
//     dt = softplus(dt_proj_weight[h] [P, R] @ dt + dt_proj_bias[h]);  A = -exp(A_log[h]) [P, N]
//     s_t = exp(dt_t A) * s_{t-1} + dt_t u_t B_t^T [P, N];  y_t = s_t C_t + D[h] u_t
//   y *= silu(z) -> out_proj -> [batch, seq, hidden]
// C = intermediate_size (expand * hidden_size) = heads * P, N = state_size, R = time_step_rank.
// States (tasks/layer_state.h, replaced every step, in the model dtype):
//   conv_state [batch_size, C, K - 1]; recurrent_state [batch_size, heads, P, N] (transformers'
//   stack of the heads' states).
// transformers' prefill scan starts every head from a zero state (mamba_selective_scan ignores the
// cache's); the graph starts from recurrent_state, which is zero for a first prefill and the
// decode step's state otherwise (a prompt prefilled in chunks equals one prefill).
// The scan over time is one ONNX Scan node (float32): one graph run for a prompt of any length.
#pragma once

#include "blocks/linear.h"
#include "blocks/token_mixer.h"

namespace mobius {

struct MultiHeadMambaOptions {
  int64_t hidden_size;
  int64_t intermediate_size;  // C: expand * hidden_size
  int64_t num_heads;          // divides C
  int64_t state_size;         // N
  int64_t conv_kernel;        // K, at least 2
  int64_t time_step_rank;     // R
  bool use_bias = false;      // in_proj, out_proj (mamba_proj_bias)
  bool use_conv_bias = true;
  std::string hidden_act = "silu";  // after the conv (hidden_mamba_act)
  DataType dtype = DataType::FLOAT;
  int64_t head_dim() const { return intermediate_size / num_heads; }
};

class MultiHeadMambaMixer : public TokenMixer {
 public:
  // Throws mobius::FieldError for sizes out of range or heads not dividing the channels.
  explicit MultiHeadMambaMixer(const MultiHeadMambaOptions& o);
  LayerStates states() const override;  // one recurrent state {conv_state, recurrent_state}
  // x: [batch, seq, hidden]; ctx.token_mask [batch, seq] (required); past {conv_state,
  // recurrent_state}. Returns [batch, seq, hidden] and the two states after the step.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  Linear *in_proj, *out_proj;
  Parameter* conv_weight;          // conv1d.weight [C, 1, K]
  Parameter* conv_bias = nullptr;  // conv1d.bias [C]
  Parameter* x_proj_weight;        // [heads, R + 2 N, P]
  Parameter* dt_proj_weight;       // [heads, P, R]
  Parameter* dt_proj_bias;         // [heads, P]
  Parameter* A_log;                // [heads, P, N]
  Parameter* D;                    // [heads, P]

 private:
  MultiHeadMambaOptions o_;
};

}  // namespace mobius
