// diffusers' Attention as UNetMidBlock2D builds it for the VAE (diffusers/models/attention_processor.py
// Attention with norm_num_groups, residual_connection=True, AttnProcessor2_0): self-attention over
// the h * w positions of a feature map, the channels as the width:
//   t = group_norm(x) viewed as [batch, h * w, channels]
//   y = to_out.0(SDPA(to_q(t), to_k(t), to_v(t)))   heads of dim_head, scale dim_head^-0.5
//   out = (y viewed as [batch, channels, h, w] + x) / rescale_output_factor
// Children group_norm, to_q, to_k, to_v, to_out.0 (Linear with bias): the diffusers state-dict names.
// Lowered to the ONNX Attention op (opset 23) without a mask, tagged with its heads (ir.h NodeTags:
// --ep cpu / cuda make it com.microsoft MultiHeadAttention, passes/multi_head_attention.cpp).
#pragma once

#include "blocks/group_norm.h"
#include "blocks/linear.h"

namespace mobius {

struct SpatialAttentionOptions {
  int64_t channels;
  int64_t heads;      // channels / attention_head_dim
  int64_t groups;     // group_norm's groups
  float eps = 1e-6f;  // group_norm's eps
  float rescale_output_factor = 1.0f;
  DataType dtype = DataType::FLOAT;
};

class SpatialAttention : public Module {
 public:
  explicit SpatialAttention(const SpatialAttentionOptions& o);
  // x [batch, channels, h, w] -> same shape and dtype.
  Value* forward(Ops& op, Value* x) const;

  GroupNorm* group_norm;
  Linear *to_q, *to_k, *to_v, *to_out;

 private:
  SpatialAttentionOptions o_;
};

}  // namespace mobius
