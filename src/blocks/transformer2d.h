// diffusers' Transformer2DModel over a continuous feature map, as the UNet's cross-attention blocks
// build it (diffusers/models/transformers/transformer_2d.py, _operate_on_continuous_inputs /
// _get_output_for_continuous_inputs):
//   h = norm(x)                                   GroupNorm(norm_num_groups, eps 1e-6)
//   proj_in: a 1x1 Conv2d before flattening to [batch, h * w, inner], or with use_linear_projection
//            a Linear after it
//   h = transformer_blocks[k](h, encoder_hidden_states)   (blocks/basic_transformer_block.h)
//   proj_out: the Linear before, or the 1x1 Conv2d after, the reshape back to [batch, inner, h, w]
//   out = h + x
// inner = heads * dim_head = in_channels. Children norm, proj_in, transformer_blocks.{k}, proj_out.
#pragma once

#include <vector>

#include "blocks/basic_transformer_block.h"
#include "blocks/conv2d.h"
#include "blocks/group_norm.h"

namespace mobius {

struct Transformer2DOptions {
  int64_t channels;  // in_channels = out_channels = heads * dim_head
  int64_t heads;
  int64_t num_layers;
  int64_t cross_attention_dim;
  int64_t groups;
  bool use_linear_projection = false;
  float norm_eps = 1e-5f;  // the blocks' LayerNorms
  DataType dtype = DataType::FLOAT;
};

class Transformer2D : public Module {
 public:
  explicit Transformer2D(const Transformer2DOptions& o);
  // x [batch, channels, h, w], encoder_hidden_states [batch, len, cross_attention_dim] -> x's shape.
  Value* forward(Ops& op, Value* x, Value* encoder_hidden_states) const;

  GroupNorm* norm;
  Conv2d *proj_in_conv = nullptr, *proj_out_conv = nullptr;
  Linear *proj_in_linear = nullptr, *proj_out_linear = nullptr;
  std::vector<BasicTransformerBlock*> blocks;

 private:
  Transformer2DOptions o_;
};

}  // namespace mobius
