// The conditioning embeddings PixArt and Sana share (diffusers/models/normalization.py
// AdaLayerNormSingle, diffusers/models/embeddings.py PixArtAlphaCombinedTimestepSizeEmbeddings and
// PixArtAlphaTextProjection):
//   AdaLayerNormSingle: embedded = emb.timestep_embedder(Timesteps(256, flip_sin_to_cos, shift 0)(t)),
//     with size conditions plus cat(emb.resolution_embedder(Timesteps(256)(resolution.flatten()))
//     .reshape(batch, -1), emb.aspect_ratio_embedder(Timesteps(256)(aspect_ratio.flatten()))
//     .reshape(batch, -1)) (each dim / 3 wide); returns linear(silu(embedded)) [batch, 6 * dim]
//     (the blocks' timestep) and embedded [batch, dim] (the output norm's).
//   PixArtAlphaTextProjection (act_fn "gelu_tanh"): linear_2(gelu_tanh(linear_1(caption))).
//   modulated_out_norm: the final norm of both models, norm(x) * (1 + scale) + shift with shift,
//     scale = (scale_shift_table [2, dim] + embedded[:, None]).chunk(2, dim=1) (SanaModulatedNorm).
// Children named as the diffusers state dict.
#pragma once

#include "blocks/norms.h"
#include "blocks/timestep_embedding.h"

namespace mobius {

struct AdaLayerNormSingleOptions {
  int64_t dim;  // a multiple of 3 with size_conditions
  bool size_conditions = false;  // use_additional_conditions
  DataType dtype = DataType::FLOAT;
};

struct AdaLayerNormSingleOutput {
  Value* timestep;  // [batch, 6 * dim]
  Value* embedded;  // [batch, dim]
};

class AdaLayerNormSingle : public Module {
 public:
  explicit AdaLayerNormSingle(const AdaLayerNormSingleOptions& o);
  // timestep [batch] (any float dtype); resolution [batch, 2] and aspect_ratio [batch, 1] in the
  // model dtype with size_conditions, else null.
  AdaLayerNormSingleOutput forward(Ops& op, Value* timestep, Value* resolution, Value* aspect_ratio) const;
  TimestepEmbedding *timestep_embedder, *resolution_embedder = nullptr, *aspect_ratio_embedder = nullptr;
  Linear* linear;

 private:
  AdaLayerNormSingleOptions o_;
};

class PixArtTextProjection : public Module {
 public:
  PixArtTextProjection(int64_t in_features, int64_t hidden_size, DataType dtype);
  // caption [batch, len, in_features] -> [batch, len, hidden_size].
  Value* forward(Ops& op, Value* caption) const;
  Linear *linear_1, *linear_2;
};

// x [batch, seq, dim], table: scale_shift_table [2, dim], embedded [batch, dim] -> x's shape; norm:
// a LayerNorm without affine (norm_out).
Value* modulated_out_norm(Ops& op, const LayerNorm& norm, Value* x, Value* table, Value* embedded);

}  // namespace mobius
