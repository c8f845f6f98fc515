// RecurrentGemma's (Griffin's) recurrent block, the token mixer of its "recurrent" layers:
// transformers/models/recurrent_gemma/modeling_recurrent_gemma.py RecurrentGemmaRecurrentBlock and
// RecurrentGemmaRglru (the Real-Gated Linear Recurrent Unit; its torch loop, _rnn_scan, is the
// specification):
//   y = act(linear_y(x));  u = depthwise causal conv1d(linear_x(x)) (kernel K = conv1d_width,
//     with bias, over the conv_state window + the step's tokens; blocks/mamba.h causal_conv1d)
//   per head h (W = lru_width channels in H = num_attention_heads blocks of W / H):
//     i = sigmoid(u_h @ input_gate_weight[h] + input_gate_bias[h]),  r likewise (recurrent_gate_*)
//     log a = -8 r softplus(recurrent_param);  a = exp(log a)
//     reset = (position_ids == 0);  x' = u i * (reset ? 1 : sqrt(1 - exp(2 log a)))
//     h_t = (reset ? 0 : a_t) * h_{t-1} + x'_t   (float32)
//   out = linear_out(h * y)
// States (tasks/layer_state.h, both replaced every step): conv_state [batch_size, W, K - 1] (the
// model dtype; transformers' conv1d_state), recurrent_state [batch_size, W] (float32, as
// transformers' rg_lru.recurrent_states, "always computed in full precision").
// Padding is not masked, as in transformers (the block ignores attention_mask): a left-padded row's
// first K - 1 tokens see the padding through the conv; the recurrence restarts where position_ids
// is 0 (the first real token under position_ids = cumsum(attention_mask) - 1).
// transformers' multi-token forward restarts the conv from zeros, ignoring conv1d_state (its
// prefill path); the graph starts from conv_state, zero for a first prefill, so a prompt prefilled
// in chunks equals one prefill. The recurrence is one ONNX Scan node over the tokens (float32): a
// prompt of any length is one graph run. The gates' sigmoid is 1 / (1 + exp(-z)) and 1 - a^2 is
// -expm1(2 log a) (its series where a^2 is within float32's last digits of 1): a saturated
// recurrent gate r ~ 1e-8 makes a = 1 - 8 r softplus(...), whose 1 - a^2 float32 cannot resolve
// (onnxruntime's Sigmoid returns 0 there; transformers' float64 keeps it).
#pragma once

#include "blocks/linear.h"
#include "blocks/token_mixer.h"

namespace mobius {

struct RgLruBlockOptions {
  int64_t hidden_size;
  int64_t lru_width;  // W
  int64_t num_heads;  // H (the config's num_attention_heads), dividing W
  int64_t conv_kernel;  // K (conv1d_width), at least 2
  std::string hidden_activation = "gelu_pytorch_tanh";  // of the y branch (blocks/activation.h)
  DataType dtype = DataType::FLOAT;
};

class RgLruBlock : public TokenMixer {
 public:
  // Throws mobius::FieldError (naming lru_width, num_attention_heads or conv1d_width) for sizes
  // out of range or heads not dividing lru_width.
  explicit RgLruBlock(const RgLruBlockOptions& o);
  LayerStates states() const override;  // one recurrent state {conv_state, recurrent_state}
  // x: [batch, seq, hidden]; ctx.position_ids int64 [batch, seq] (required); past {conv_state,
  // recurrent_state}. Returns [batch, seq, hidden] and the two states after the step.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  Linear *linear_y, *linear_x, *linear_out;
  Parameter *conv_weight, *conv_bias;  // conv_1d.weight [W, 1, K], conv_1d.bias [W]
  Parameter* recurrent_param;          // rg_lru.recurrent_param [W]
  // rg_lru.{input,recurrent}_gate_weight [H, W / H, W / H] and _bias [H, W / H]
  Parameter *input_gate_weight, *input_gate_bias, *recurrent_gate_weight, *recurrent_gate_bias;

 private:
  // sigmoid of the block-diagonal gate: u [batch, seq, W] -> [batch, seq, W]
  Value* gate(Ops& op, Value* u, const Parameter* weight, const Parameter* bias) const;
  RgLruBlockOptions o_;
};

}  // namespace mobius
