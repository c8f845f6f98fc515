// The Pixtral vision tower (transformers/models/pixtral/{configuration,modeling}_pixtral.py,
// PixtralVisionModel), which Mistral 3 (archs/mistral3.cpp) runs on each image:
//   patch_conv (Conv2d, kernel = stride = patch_size, no bias) -> ln_pre (RMSNorm, eps 1e-5) ->
//   transformer.layers.{i}: x + attention(attention_norm(x)), then + feed_forward(ffn_norm(x))
//   (RMSNorm eps 1e-5; attention q/k/v/o_proj without bias, heads of hidden_size /
//   num_attention_heads (PixtralVisionConfig.__post_init__ overrides head_dim), 2-D RoPE over the
//   patch grid; feed_forward gate_proj/up_proj/down_proj, act(gate) * up, hidden_act).
// 2-D RoPE (PixtralVisionRotaryEmbedding, rope_type "axial"): with inv_freq[j] =
// rope_theta^(-2j / head_dim), j < head_dim / 2, the rotation half of a patch at grid row h, column
// w is [h * inv_freq[0::2], w * inv_freq[1::2]] (rotate_half layout over the whole head).
// transformers concatenates the images into one sequence with a block-diagonal mask
// (generate_block_attention_mask); forward runs each image as one batch row, which is the same
// attention, and forward_packed builds transformers' one sequence (the standalone `pixtral` type).
#pragma once

#include <memory>
#include <vector>

#include "blocks/decoder.h"
#include "blocks/vision_transformer.h"
#include "config/hf_config.h"

namespace mobius {

class PixtralVisionTower : public Module {
 public:
  // vision_config: a pixtral config object (PixtralVisionConfig; omitted fields take its
  // defaults). Throws mobius::Error naming the field: num_attention_heads not dividing
  // hidden_size into heads whose size is a multiple of 4, patch_size < 1, rope_parameters'
  // rope_type other than "axial" (or "default", which PixtralVisionConfig turns into "axial"), an
  // unknown hidden_act. rope_theta: the rope dict's, else the top-level field.
  PixtralVisionTower(const HfConfig& vision_config, DataType dtype);

  // pixel_values: [num_images, num_channels, height, width] in the model dtype, images of one size
  // (height and width any multiples of patch_size; a remainder is cut off as the Conv does).
  // `layers`: how many layers to run (-1 = all). Returns hidden_states[k], k = 0..layers: the
  // sequence [num_images, (height / patch) * (width / patch), hidden_size] (patches row-major)
  // after k layers (k = 0: after ln_pre), transformers' output_hidden_states.
  std::vector<Value*> forward(Ops& op, Value* pixel_values, int64_t layers = -1) const;

  // PixtralVisionModel.forward on a padded batch: pixel_values [num_images, num_channels, height,
  // width] in the model dtype (each image zero-padded to the batch's size), image_sizes int64
  // [num_images, 2] (each image's height, width in pixels). Each image's (height / patch) x
  // (width / patch) patches are cut from the patch grid (a remainder is cut off) and the images
  // concatenated, row-major, into one sequence attended block-diagonally (one block per image):
  // last_hidden_state [1, Σ patches, hidden_size] after all layers. transformers' RoPE table
  // covers image_size / patch_size rows and columns, so larger images fail there; here the
  // angles continue.
  Value* forward_packed(Ops& op, Value* pixel_values, Value* image_sizes) const;

  int64_t hidden_size() const { return hidden_; }
  int64_t patch_size() const { return patch_; }
  int64_t num_channels() const { return channels_; }
  int64_t num_hidden_layers() const { return static_cast<int64_t>(layers_.size()); }

  PatchEmbedding* patch_conv;
  RMSNorm* ln_pre;

 private:
  // cos/sin [num_images, patches, head_dim / 2] of the grid of `pixel_values` (above).
  RopeTables rope(Ops& op, Value* pixel_values) const;
  // cos/sin [1, patches, head_dim / 2] of patches at grid rows `row`, columns `col` (int64
  // [patches]).
  RopeTables rope_at(Ops& op, Value* row, Value* col) const;

  std::vector<DecoderLayer*> layers_;
  int64_t hidden_, patch_, channels_, head_dim_;
  double theta_;
  DataType dtype_;
};

}  // namespace mobius
