// The blocks of diffusers' Sana transformer (diffusers/models/transformers/sana_transformer.py;
// SanaLinearAttnProcessor2_0 in diffusers/models/attention_processor.py), over tokens of an h x w
// patch grid, x [batch, h * w, dim]:
//   SanaLinearAttention (attn1, qk_norm null): q = relu(to_q(x)), k = relu(to_k(x)), v = to_v(x),
//     per head (in float32): out = (v^T k) q / ((sum over tokens of k) q + 1e-15), i.e. diffusers'
//     matmul of v padded with a row of ones against k, then q, divided by that last row; to_out.0.
//     to_q / to_k / to_v with bias as attention_bias, to_out.0 with bias.
//   GLUMBConv (ff, no norm, no residual) on the grid [batch, dim, h, w]: conv_inverted (1x1, dim ->
//     2 * hidden, bias), silu, conv_depth (3x3 depthwise, padding 1, bias), h, gate = chunk(2) on
//     channels, conv_point(h * silu(gate)) (1x1, hidden -> dim, no bias); hidden = int(mlp_ratio * dim).
//   SanaTransformerBlock: shift/scale/gate of attention and MLP = scale_shift_table [6, dim] +
//     timestep [batch, 6 * dim] (AdaLayerNormSingle's output):
//     x = x + gate_msa * attn1(norm1(x) * (1 + scale_msa) + shift_msa)     norm1: no affine
//     x = x + attn2(x, encoder_hidden_states, encoder_attention_bias)       (blocks/basic_transformer_block.h
//         DiffusersAttention: num_cross_attention_heads of cross_attention_head_dim, bias)
//     x = x + gate_mlp * ff(norm2(x) * (1 + scale_mlp) + shift_mlp)         norm2: affine as
//         norm_elementwise_affine; both LayerNorm(norm_eps)
// Children named as the diffusers state dict.
#pragma once

#include "blocks/basic_transformer_block.h"
#include "blocks/conv2d.h"

namespace mobius {

class SanaLinearAttention : public Module {
 public:
  SanaLinearAttention(int64_t dim, int64_t heads, int64_t head_dim, bool bias, DataType dtype);
  // x [batch, seq, dim] -> [batch, seq, dim].
  Value* forward(Ops& op, Value* x) const;
  Linear *to_q, *to_k, *to_v, *to_out;

 private:
  int64_t heads_, head_dim_;
  DataType dtype_;
};

class GLUMBConv : public Module {
 public:
  GLUMBConv(int64_t dim, int64_t hidden, DataType dtype);
  // x [batch, dim, h, w] -> [batch, dim, h, w].
  Value* forward(Ops& op, Value* x) const;
  Conv2d *conv_inverted, *conv_depth, *conv_point;

 private:
  int64_t hidden_;
};

struct SanaTransformerBlockOptions {
  int64_t dim;
  int64_t heads;
  int64_t head_dim;
  int64_t cross_heads;
  int64_t cross_head_dim;
  int64_t cross_attention_dim;
  int64_t ff_hidden;  // int(mlp_ratio * dim)
  bool attention_bias = false;
  bool norm_elementwise_affine = false;
  float norm_eps = 1e-6f;
  DataType dtype = DataType::FLOAT;
};

class SanaTransformerBlock : public Module {
 public:
  explicit SanaTransformerBlock(const SanaTransformerBlockOptions& o);
  // x [batch, h * w, dim], states [batch, len, cross_attention_dim], bias additive [batch, 1, h * w,
  // len], timestep [batch, 6 * dim], grid int64 [2] (h, w) -> [batch, h * w, dim].
  Value* forward(Ops& op, Value* x, Value* states, Value* bias, Value* timestep, Value* grid) const;
  LayerNorm *norm1, *norm2;
  SanaLinearAttention* attn1;
  DiffusersAttention* attn2;
  GLUMBConv* ff;
  Parameter* scale_shift_table;

 private:
  SanaTransformerBlockOptions o_;
};

}  // namespace mobius
