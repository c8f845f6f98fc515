// The mLSTM layer of xLSTM (transformers/models/xlstm/modeling_xlstm.py xLSTMLayer with its native
// backend, xLSTMBackend: mlstm_recurrent_step_native is the specification of the recurrence):
//   q, k [batch, seq, H, Dqk], v [batch, seq, H, Dv], o = ogate_preact(x) [batch, seq, H * Dv];
//   i, f = cap * tanh(igate_preact(x) / cap), likewise fgate (gate_soft_cap) [batch, seq, H]
//   per head, from the state (C [Dqk, Dv], n [Dqk], m [1]):
//     m' = max(logsigmoid(f) + m, i);  f' = exp(logsigmoid(f) + m - m');  i' = exp(i - m')
//     C' = f' C + i' k v^T;  n' = f' n + i' k;  q~ = q Dqk^-0.5
//     h = (q~ C') / (max(|q~ . n'|, exp(-m')) + eps)
//   out = out_proj(sigmoid(o) * multihead_norm(h))
// multihead_norm: LayerNorm over each head's Dv channels (no affine, epsilon norm_eps), then a weight
// (and with use_bias a bias) over the H * Dv channels. The projections (weight_mode "single"): q, k,
// v, ogate_preact (bias with use_bias), igate_preact / fgate_preact (always with bias).
// transformers' inference mode runs whole chunks of chunk_size tokens in closed form
// (mlstm_chunkwise_native_autograd) and the rest token by token (mlstm_recurrent_sequence_native,
// one token: mlstm_recurrent_step_native); the chunks' max state m is the recurrence's, so both
// give the same h and states in exact arithmetic. The graph runs the recurrence as one ONNX Scan
// over the tokens (float32): a prompt of any length is one run, and a prompt prefilled in pieces
// equals one prefill.
// States (tasks/layer_state.h, replaced every step, float32 as transformers' inference_state_dtype):
// C [batch_size, H, Dqk, Dv], n [batch_size, H, Dqk], m [batch_size, H, 1] (xLSTMCache.rnn_state's
// three tensors per layer, zeros before the first token). attention_mask is not read (as in
// transformers): a padded position is a token like any other.
#pragma once

#include "blocks/linear.h"
#include "blocks/token_mixer.h"

namespace mobius {

struct MLstmOptions {
  int64_t hidden_size;
  int64_t num_heads;  // H
  int64_t qk_dim;     // H * Dqk: int(hidden_size * qk_dim_factor)
  int64_t v_dim;      // H * Dv: int(hidden_size * v_dim_factor)
  bool bias = false;        // use_bias: the q/k/v/o projections', out_proj's and multihead_norm's bias
  double gate_soft_cap = 15.0;
  float norm_eps = 1e-6f;   // multihead_norm's epsilon
  double eps = 1e-6;        // added to the denominator of h
  DataType dtype = DataType::FLOAT;
};

class MLstmLayer : public TokenMixer {
 public:
  // Throws mobius::Error for sizes below 1 or heads not dividing qk_dim and v_dim (the caller
  // range-checks the config fields they come from).
  explicit MLstmLayer(const MLstmOptions& o);
  LayerStates states() const override;  // one recurrent state {C, n, m}
  // x: [batch, seq, hidden_size]; past {C, n, m}. Returns [batch, seq, hidden_size] and the three
  // states after the step. ctx is not read.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  Linear *q, *k, *v, *ogate_preact, *igate_preact, *fgate_preact;
  Parameter *norm_weight, *norm_bias = nullptr;  // multihead_norm.weight / .bias [H * Dv]
  Linear* out_proj;

 private:
  MLstmOptions o_;
};

}  // namespace mobius
