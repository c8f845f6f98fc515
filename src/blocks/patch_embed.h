// diffusers' PatchEmbed with its 2-D sin-cos position table (diffusers/models/embeddings.py
// PatchEmbed, get_2d_sincos_pos_embed, pos_embed_type "sincos", no pos_embed_max_size, no
// layer_norm), as the DiT, PixArt and Sana transformers build it, and the unpatchify of their outputs:
//   tokens = proj(latent) flattened to [batch, h * w, dim]   (Conv2d patch x patch, stride patch)
//   out = tokens + pos_embed(h, w)   (tokens alone without an interpolation_scale: pos_embed_type
//                                     None, as Sana's default)
// The position table is not in the checkpoint (a non-persistent buffer): it is computed in the graph
// for the h x w patch grid of the input, as diffusers recomputes it for a size other than
// sample_size (and equals its buffer at that size): row r, column c, with
//   grid_h[r] = r / (h / base_size) / interpolation_scale, grid_w[c] likewise over w,
//   omega[k] = 1 / 10000^(k / (dim / 4)), k < dim / 4,
//   pos[r * w + c] = [sin(grid_w[c] omega), cos(grid_w[c] omega), sin(grid_h[r] omega), cos(grid_h[r] omega)]
// (the column first: get_2d_sincos_pos_embed's meshgrid is "xy"), in float32 (diffusers computes the
// products in float64 from float32 grids), cast to the model dtype. Children: proj.
#pragma once

#include <optional>

#include "blocks/conv2d.h"

namespace mobius {

struct PatchEmbedOptions {
  int64_t in_channels;
  int64_t dim;  // embed_dim, a multiple of 4
  int64_t patch_size;
  int64_t base_size;  // sample_size // patch_size
  std::optional<double> interpolation_scale = 1.0;  // nullopt: no position table
  DataType dtype = DataType::FLOAT;
};

struct PatchEmbedOutput {
  Value* tokens;  // [batch, h * w, dim]
  Value* grid;    // int64 [2]: h, w (the patch grid)
};

class PatchEmbed : public Module {
 public:
  explicit PatchEmbed(const PatchEmbedOptions& o);
  // latent [batch, in_channels, H, W] (H, W multiples of patch_size) -> tokens with positions and
  // the patch grid h = H / patch_size, w = W / patch_size.
  PatchEmbedOutput forward(Ops& op, Value* latent) const;
  Conv2d* proj;

 private:
  PatchEmbedOptions o_;
};

// The unpatchify of the DiT-family outputs (torch.einsum("nhwpqc->nchpwq")): x [batch, h * w,
// p * p * channels], grid int64 [2] (h, w) -> [batch, channels, h * p, w * p].
Value* unpatchify(Ops& op, Value* x, Value* grid, int64_t patch_size, int64_t channels);

}  // namespace mobius
