// diffusers' BasicTransformerBlock as the UNet's Transformer2DModel builds it (diffusers/models/attention.py;
// norm_type "layer_norm", activation_fn "geglu", attention_bias False, no ada-norm, no positional
// embedding), over tokens x [batch, seq, dim]:
//   x = attn1(norm1(x)) + x                          self-attention
//   x = attn2(norm2(x), encoder_hidden_states) + x   cross-attention
//   x = ff(norm3(x)) + x                             GEGLU: h, gate = net.0.proj(x).chunk(2);
//                                                    net.2(h * gelu(gate)) (erf gelu), inner 4 * dim
// Attention (attention_processor.py Attention, AttnProcessor2_0): to_q, to_k, to_v without bias,
// to_out.0 with bias, heads of dim_head, SDPA with scale dim_head^-0.5 and no mask (the ONNX
// Attention op, tagged with its heads for the multi_head_attention lowering). norm1..3:
// LayerNorm (eps norm_eps, affine). Children named as the diffusers state dict.
#pragma once

#include "blocks/linear.h"
#include "blocks/norms.h"

namespace mobius {

struct BasicTransformerBlockOptions {
  int64_t dim;
  int64_t heads;
  int64_t dim_head;
  int64_t cross_attention_dim;
  float norm_eps = 1e-5f;
  DataType dtype = DataType::FLOAT;
};

// diffusers' Attention without a norm or residual: to_out.0(SDPA(to_q(x), to_k(c), to_v(c))).
class DiffusersAttention : public Module {
 public:
  // kv_dim: the width of the states keys and values are projected from (dim for self-attention).
  DiffusersAttention(int64_t dim, int64_t kv_dim, int64_t heads, int64_t dim_head, DataType dtype);
  // x [batch, seq, dim], context [batch, len, kv_dim] (x itself for self-attention) -> [batch, seq, dim].
  Value* forward(Ops& op, Value* x, Value* context) const;
  Linear *to_q, *to_k, *to_v, *to_out;

 private:
  int64_t heads_, dim_head_;
};

class BasicTransformerBlock : public Module {
 public:
  explicit BasicTransformerBlock(const BasicTransformerBlockOptions& o);
  // x [batch, seq, dim], encoder_hidden_states [batch, len, cross_attention_dim] -> [batch, seq, dim].
  Value* forward(Ops& op, Value* x, Value* encoder_hidden_states) const;
  LayerNorm *norm1, *norm2, *norm3;
  DiffusersAttention *attn1, *attn2;
  Linear *ff_proj, *ff_out;  // ff.net.0.proj [dim -> 2 * inner], ff.net.2 [inner -> dim]

 private:
  int64_t inner_;  // FeedForward's inner width, 4 * dim
};

}  // namespace mobius
