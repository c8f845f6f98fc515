// LFM2's gated short convolution token mixer (transformers/models/lfm2/modeling_lfm2.py
// Lfm2ShortConv; its torch path, causal_conv1d_fn / causal_conv1d_update, is the specification):
//   x [batch, seq, hidden] * token_mask -> in_proj -> (B, C, x') [batch, seq, hidden] each
//   B * x' -> depthwise causal conv1d (kernel L = conv_L_cache, over the conv_state window + the
//   step's tokens; no activation, blocks/mamba.h causal_conv1d) -> * C -> out_proj
// State (tasks/layer_state.h, replaced every step, in the model dtype): conv_state [batch_size,
// hidden, L - 1], the last L - 1 conv inputs (transformers' cache keeps L; the first is never read).
// The padded positions are zeroed before in_proj only (as transformers'
// apply_mask_to_padding_states): with bias, a padded position's B * x' is in_proj's bias product.
#pragma once

#include "blocks/linear.h"
#include "blocks/token_mixer.h"

namespace mobius {

struct ShortConvOptions {
  int64_t hidden_size;
  int64_t kernel;     // L, conv_L_cache: at least 2
  bool bias = false;  // conv_bias: in_proj, conv and out_proj
  DataType dtype = DataType::FLOAT;
};

class ShortConvMixer : public TokenMixer {
 public:
  // Throws mobius::FieldError for hidden_size or kernel out of range.
  explicit ShortConvMixer(const ShortConvOptions& o);
  LayerStates states() const override;  // one recurrent {conv_state [batch_size, hidden, L - 1]}
  // x: [batch, seq, hidden]; ctx.token_mask [batch, seq] (required); past {conv_state}. Returns
  // [batch, seq, hidden] and the conv_state after the step.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  Linear *in_proj, *out_proj;
  Parameter* conv_weight;          // conv.weight [hidden, 1, L]
  Parameter* conv_bias = nullptr;  // conv.bias [hidden]

 private:
  ShortConvOptions o_;
};

}  // namespace mobius
