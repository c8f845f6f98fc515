// MiniMax's lightning attention token mixer (transformers/models/minimax/modeling_minimax.py
// MiniMaxLightningAttention, 5.23), a linear attention with a per-head scalar decay:
//   x [batch, seq, hidden] -> act(qkv_proj(x)) * token_mask, viewed per head as [q | k | v]
//     (H heads of D each: [batch, seq, H, 3 D]); no scaling, no RoPE
//   per head h the decay r = exp(-slope_h), per token t, S [D, D]:
//     S_t = r S_{t-1} + k_t^T v_t;  o_t = q_t S_t
//   o [batch, seq, H D] -> RMSNorm over all H D channels (norm.weight, eps 1e-6: the module's
//     MiniMaxRMSNorm default, not rms_norm_eps) * sigmoid(output_gate(x)) -> out_proj
//   slope_h = (1 / 2^(8 / H))^(h + 1) * (1 - layer / (num_hidden_layers - 1 + 1e-5) + 1e-5)
// The step's T tokens are one closed-form chunk (transformers' block formulation with a block of
// the step's length, exact for any length; transformers cuts a prompt into blocks of block_size and
// steps a cached forward token by token, the same sums in another order), in float32:
//   o = (Q K^T * D) V + (Q * q_decay) S_0,       D[i, j] = r^(i - j) for i >= j, else 0
//   S_T = r^T S_0 + (K * k_decay)^T V,          q_decay[i] = r^(i + 1), k_decay[j] = r^(T - 1 - j)
// The slopes are computed from the config (num_attention_heads, the layer index, num_hidden_layers),
// not read: transformers' slope_rate / query_decay / key_decay / diagonal_decay buffers, which
// save_pretrained writes, are those same functions of the config (and of block_size, which the
// closed form does not need); archs/minimax.cpp does not report them unused.
// State (tasks/layer_state.h, replaced every step, in the model dtype), named after transformers'
// MiniMaxCache.linear_cache: linear_cache [batch_size, H, D, D], S after the step's last token.
#pragma once

#include <string>
#include <vector>

#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/token_mixer.h"

namespace mobius {

struct LightningAttentionOptions {
  int64_t hidden_size;
  int64_t num_heads;          // H, num_attention_heads
  int64_t head_dim;           // D, head_dim (hidden_size / num_attention_heads)
  int64_t layer_index;        // the layer's index, 0 .. num_hidden_layers - 1
  int64_t num_hidden_layers;  // of the model (the slopes' layer factor)
  std::string hidden_act = "silu";  // after qkv_proj
  DataType dtype = DataType::FLOAT;
};

// The per-head slopes of layer `o.layer_index` (MiniMaxLightningAttention.get_slope_rate), [H].
std::vector<float> lightning_slopes(const LightningAttentionOptions& o);

class LightningAttention : public TokenMixer {
 public:
  // Asserts positive sizes and a layer index within num_hidden_layers (the architecture checks
  // the config fields they come from).
  explicit LightningAttention(const LightningAttentionOptions& o);
  LayerStates states() const override;  // one recurrent state {linear_cache}
  // x: [batch, seq, hidden]; ctx.token_mask [batch, seq] (required); past {linear_cache}.
  // Returns [batch, seq, hidden] and linear_cache after the step.
  MixerResult mix(Ops& op, Value* x, const AttentionContext& ctx, std::span<Value* const> past) const override;

  Linear *qkv_proj, *output_gate, *out_proj;
  Norm* norm;  // norm.weight [H D]

 private:
  LightningAttentionOptions o_;
};

}  // namespace mobius
