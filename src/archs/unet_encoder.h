// The encoder half of diffusers' UNet2DConditionModel (diffusers/models/unets/unet_2d_condition.py),
// which ControlNetModel (diffusers/models/controlnets/controlnet.py) repeats with the same
// state-dict names: conv_in, the time embedding (time_embedding [, add_embedding of SDXL's
// addition_embed_type "text_time"]), the down blocks (CrossAttnDownBlock2D / DownBlock2D of
// unets/unet_2d_blocks.py) and the mid block (UNetMidBlock2DCrossAttn):
//   emb = time_embedding(Timesteps(block_out_channels[0])(timestep))
//         [+ add_embedding(concat(text_embeds, Timesteps(addition_time_embed_dim)(time_ids) flattened))]
//   down block i: layers_per_block[i] x (ResnetBlock2D(x, emb) [, Transformer2D(x, states)]), each
//     output a skip; a Downsample2D (padding downsample_padding) but on the last block, also a skip
//   mid: resnets.0, attentions.0, resnets.1 (output_scale_factor mid_block_scale_factor)
// Heads: diffusers passes attention_head_dim as the number of heads (its naming issue 2011):
// block i's Transformer2D has attention_head_dim[i] heads of block_out_channels[i] / heads.
// Both models register a UNetEncoder as their child "" (its children keep the top-level names).
#pragma once

#include <string>
#include <vector>

#include "archs/diffusers_config.h"
#include "blocks/resample2d.h"
#include "blocks/resnet_block2d.h"
#include "blocks/timestep_embedding.h"
#include "blocks/transformer2d.h"

namespace mobius {

// The config of the encoder half: the fields both classes read alike.
struct UNetEncoderSpec {
  int64_t in_channels, groups, cross_attention_dim, downsample_padding;
  int64_t conv_in_kernel = 3;                // UNet2DConditionModel's conv_in_kernel; ControlNetModel: 3
  int64_t time_embed_dim;                    // UNet2DConditionModel's time_embedding_dim; else 4 x channels[0]
  std::vector<int64_t> channels, layers, heads, transformer_layers;
  std::vector<bool> cross;                   // down block i has attentions (CrossAttnDownBlock2D)
  std::string act;
  bool flip_sin_to_cos, linear_projection;
  double freq_shift;
  float eps, mid_scale;
  float resnet_scale = 1.0f;                 // UNet2DConditionModel's resnet_out_scale_factor
  bool text_time = false;                    // addition_embed_type "text_time"
  int64_t addition_time_embed_dim = 0, projection_input_dim = 0;
  DataType dtype;
};

// Reads the shared fields of a UNet2DConditionModel / ControlNetModel config.json (with its class'
// defaults) and refuses, naming the field, the mechanisms mobius does not build: num_attention_heads,
// class embeddings, encoder_hid_dim projections, only_cross_attention, resnet_time_scale_shift other
// than "default", a mid block other than UNetMidBlock2DCrossAttn, addition_embed_type other than
// null or "text_time", down blocks other than CrossAttnDownBlock2D / DownBlock2D; sizes out of range
// or channels that do not split into norm_num_groups groups or into the block's heads. `what`
// completes the refusal message ("mobius builds <what>"). time_embed_dim is 4 x channels[0] and
// conv_in_kernel 3 (the caller sets its own).
UNetEncoderSpec unet_encoder_spec(const HfConfig& c, DataType dtype, const std::string& what);

// ResnetBlock2D options of a block of the UNet (temb time_embed_dim, the spec's groups, eps, act).
ResnetBlock2DOptions unet_resnet(const UNetEncoderSpec& s, int64_t in, int64_t out, float scale);
// Transformer2D options of block `block` (its heads and layers) at `channels`.
Transformer2DOptions unet_transformer(const UNetEncoderSpec& s, size_t block, int64_t channels);

// Where down block `block` adds its intrablock residual, a T2IAdapter's map
// (UNet2DConditionModel.forward's down_intrablock_additional_residuals): a CrossAttnDownBlock2D to
// its last attention's output, before its downsampler (level `block`); a DownBlock2D to its output,
// after its downsampler if it has one (level block + 1; the add is in place in diffusers, so that
// skip holds it too). A level is the number of downsamplers before it; the mid block's is the
// number of blocks - 1.
int64_t unet_intrablock_level(const UNetEncoderSpec& s, size_t block);

// One resnet of a block and its Transformer2D (null in DownBlock2D / UpBlock2D).
struct UNetLayer {
  ResnetBlock2D* resnet;
  Transformer2D* attention;
  // x [batch, in, h, w], emb [batch, time_embed_dim], states [batch, seq, cross_attention_dim]
  // -> [batch, out, h, w].
  Value* forward(Ops& op, Value* x, Value* emb, Value* states) const;
};

class UNetEncoder : public Module {
 public:
  explicit UNetEncoder(const UNetEncoderSpec& s);
  // The graph inputs of UNet2DConditionModel.forward and ControlNetModel.forward the encoder reads,
  // in their order, of the spec's dtype: sample [batch_size, in_channels, height, width], timestep
  // [timestep_batch], encoder_hidden_states [batch_size, sequence_length, cross_attention_dim].
  struct Inputs {
    Value *sample, *timestep, *encoder_hidden_states;
  };
  Inputs inputs(GraphBuilder& b) const;
  // The time embedding [batch, time_embed_dim] of `timestep` [1 or batch] (expanded to the batch
  // of `sample`); with text_time, adds the graph inputs text_embeds [batch_size, text_embeds_dim]
  // and time_ids [batch_size, num_time_ids] and their add_embedding.
  Value* embedding(Ops& op, Value* sample, Value* timestep) const;
  // x = conv_in(sample) [batch, channels[0], h, w] through the down blocks -> the skips, in
  // diffusers' order (x first, then every resnet / attention output and every downsampler's);
  // the last is the down blocks' output. intrablock[i] (a T2IAdapter's map, of intrablock_shape(i);
  // diffusers' down_intrablock_additional_residuals) is added in down block i, for i below its size.
  std::vector<Value*> down(Ops& op, Value* x, Value* emb, Value* states,
                           const std::vector<Value*>& intrablock = {}) const;
  // The shape of down block `block`'s intrablock residual (unet_intrablock_level).
  Shape intrablock_shape(size_t block) const {
    return level_shape(s_.channels[block], unet_intrablock_level(s_, block));
  }
  // The mid block: [batch, channels.back(), h, w] -> the same shape.
  Value* mid(Ops& op, Value* x, Value* emb, Value* states) const;
  // The channels of each skip down() returns, in its order.
  const std::vector<int64_t>& skip_channels() const { return skip_channels_; }
  // Skip i's shape [batch_size, its channels, height_down{k}, width_down{k}] (k: the downsamplers
  // before it; level 0 is height, width), as a graph input's or output's dims.
  Shape skip_shape(size_t i) const { return level_shape(skip_channels_[i], skip_levels_[i]); }
  // The mid block's shape: the last skip's.
  Shape mid_shape() const { return skip_shape(skip_channels_.size() - 1); }

  Conv2d* conv_in;
  TimestepEmbedding *time_embedding, *add_embedding = nullptr;
  std::vector<UNetLayer> down_layers;
  std::vector<Downsample2D*> downsamplers;
  ResnetBlock2D *mid_first, *mid_second;
  Transformer2D* mid_attention;

 private:
  static Shape level_shape(int64_t channels, int64_t level);
  UNetEncoderSpec s_;
  std::vector<int64_t> skip_channels_, skip_levels_;
};

}  // namespace mobius
