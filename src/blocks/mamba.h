// The Mamba (selective state-space) token mixer: transformers/models/mamba/modeling_mamba.py
// MambaMixer (its slow, torch path is the specification), and FalconMamba's variant with
// parameter-free RMS norms on dt, B and C (models/falcon_mamba/modular_falcon_mamba.py; Jamba's,
// models/jamba/modular_jamba.py JambaMambaMixer, with weights).
//   x [batch, seq, hidden] * token_mask -> in_proj -> (xs, z), each [batch, seq, C]
//   xs -> depthwise causal conv1d (kernel K, over the conv_state window + the step's tokens)
//      -> hidden_act -> * token_mask = u
//   x_proj(u) -> (dt [R], B [N], C [N])  (FalconMamba: each RMS-normalized, no weight; Jamba: with)
//   dt = softplus(dt_proj(dt));  A = -exp(A_log) [C, N]
//   h_t = exp(dt_t A) * h_{t-1} + dt_t B_t u_t;  y_t = h_t C_t + D u_t;  y *= silu(z)
//   -> out_proj -> [batch, seq, hidden]
// C = intermediate_size (expand * hidden_size), N = state_size, R = time_step_rank.
// States (tasks/layer_state.h, both replaced every step, in the model dtype):
//   conv_state [batch_size, C, K - 1]: the last K - 1 conv inputs (transformers keeps K; the
//     first is never read);
//   recurrent_state [batch_size, C, N]: h after the step's last token.
// The scan over time is one ONNX Scan node (float32), so a prompt of any length is one graph run
// (docs/design.md "The state model"): its body is h = dA_t * h + dBu_t; y_t = h @ C_t.
#pragma once

#include <optional>

#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/token_mixer.h"

namespace mobius {

struct MambaOptions {
  int64_t hidden_size;
  int64_t intermediate_size;  // C: expand * hidden_size
  int64_t state_size;         // N
  int64_t conv_kernel;        // K, at least 2
  int64_t time_step_rank;     // R
  bool use_bias = false;      // in_proj, out_proj
  bool use_conv_bias = true;
  std::string hidden_act = "silu";  // after the conv (blocks/activation.h)
  // FalconMamba: dt, B and C are RMS-normalized without weight (mixer_rms_eps); nullopt: Mamba
  std::optional<float> dt_b_c_rms_eps;
  // with dt_b_c_rms_eps: the three norms have weights, dt_layernorm / b_layernorm / c_layernorm.weight
  // (JambaMambaMixer, epsilon rms_norm_eps)
  bool dt_b_c_norm_weights = false;
  DataType dtype = DataType::FLOAT;
};

// `x` in float32 (a Cast unless it is already): the mixers' scans run in float32, as transformers'.
Value* to_float(Ops& op, Value* x);

// The causal depthwise conv1d of the Mamba mixers (transformers' causal_conv1d_fn / _update):
// x [batch, seq, channels] after the window `past` [batch, channels, kernel - 1] of the previous
// inputs, weight [channels, 1, kernel], bias [channels] or null. Returns act(conv) [batch, seq,
// channels] (act "": the conv itself, LFM2's blocks/short_conv.h) and the new window [batch,
// channels, kernel - 1] (the last kernel - 1 inputs).
std::pair<Value*, Value*> causal_conv1d(Ops& op, Value* x, Value* past, Value* weight, Value* bias, int64_t channels,
                                        int64_t kernel, const std::string& act);

// AttentionContext::token_mask, which the Mamba mixers read: the step's columns of attention_mask
// (int64 [batch, total_seq]), the last seq = tokens.shape[1] of them, as [batch, seq] in `dtype`
// (1 at the step's tokens, 0 at padding). tokens: input_ids [batch, seq] or inputs_embeds.
Value* step_token_mask(Ops& op, Value* attention_mask, Value* tokens, DataType dtype);

class MambaMixer : public TokenMixer {
 public:
  // Throws mobius::FieldError for sizes out of range (blocks/spec_check.h check_mamba).
  explicit MambaMixer(const MambaOptions& o);
  LayerStates states() const override;  // one recurrent state {conv_state, recurrent_state}
  // x: [batch, seq, hidden]; ctx.token_mask [batch, seq] (required); past {conv_state,
  // recurrent_state}. Returns [batch, seq, hidden] and the two states after the step.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  Linear *in_proj, *x_proj, *dt_proj, *out_proj;
  Parameter* conv_weight;          // conv1d.weight [C, 1, K]
  Parameter* conv_bias = nullptr;  // conv1d.bias [C]
  RMSNorm *dt_layernorm = nullptr, *b_layernorm = nullptr, *c_layernorm = nullptr;  // FalconMamba
  Parameter* A_log;                // [C, N]
  Parameter* D;                    // [C]

 private:
  // The selective scan from h0 [batch, C, N] (float32): u, dt [batch, seq, C], B, C [batch, seq, N]
  // (float32) -> y [batch, seq, C] and the last h.
  std::pair<Value*, Value*> scan(Ops& op, Value* h0, Value* u, Value* dt, Value* b, Value* c) const;
  MambaOptions o_;
};

}  // namespace mobius
