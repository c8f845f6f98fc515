// diffusers' timestep embeddings (diffusers/models/embeddings.py):
//   timestep_sinusoids: Timesteps / get_timestep_embedding (max_period 10000, scale 1): for t [n],
//     half = dim / 2, freq[k] = exp(-ln(10000) * k / (half - downscale_freq_shift)),
//     e = [sin(t * freq), cos(t * freq)] (flip_sin_to_cos: [cos, sin]), zero-padded by one column
//     for an odd dim. Computed in float32 (the reference casts the timesteps with .float()), then
//     cast to `dtype` (t_emb.to(sample.dtype)).
//   TimestepEmbedding: linear_2(act(linear_1(x))) (no cond_proj, no post_act), children linear_1,
//     linear_2 (Linear with bias).
//   CombinedTimestepLabelEmbeddings (DiT's AdaLayerNormZero emb): timestep_embedder(Timesteps(256,
//     flip_sin_to_cos, downscale_freq_shift 1)(t)) + class_embedder(class_labels), the LabelEmbedding
//     table num_classes + 1 rows (class_dropout_prob 0.1: the last row is the unconditional class).
#pragma once

#include <string>

#include "blocks/linear.h"

namespace mobius {

struct TimestepSinusoidOptions {
  int64_t dim;
  bool flip_sin_to_cos = true;
  double downscale_freq_shift = 0.0;
  DataType dtype = DataType::FLOAT;
};

// t: [n], any float dtype -> [n, dim] in o.dtype.
Value* timestep_sinusoids(Ops& op, Value* t, const TimestepSinusoidOptions& o);

struct TimestepEmbeddingOptions {
  int64_t in_channels;
  int64_t time_embed_dim;
  std::string act = "silu";
  DataType dtype = DataType::FLOAT;
};

class TimestepEmbedding : public Module {
 public:
  explicit TimestepEmbedding(const TimestepEmbeddingOptions& o);
  // x [n, in_channels] -> [n, time_embed_dim].
  Value* forward(Ops& op, Value* x) const;
  Linear *linear_1, *linear_2;

 private:
  std::string act_;
};

class CombinedTimestepLabelEmbeddings : public Module {
 public:
  CombinedTimestepLabelEmbeddings(int64_t num_classes, int64_t dim, DataType dtype);
  // The Timesteps(256) options of its time_proj (applied by the caller, once for every block).
  static TimestepSinusoidOptions time_proj(DataType dtype) {
    return {.dim = 256, .flip_sin_to_cos = true, .downscale_freq_shift = 1.0, .dtype = dtype};
  }
  // t_proj [batch, 256] (timestep_sinusoids(time_proj)), class_labels int64 [batch] -> [batch, dim].
  Value* forward(Ops& op, Value* t_proj, Value* class_labels) const;
  TimestepEmbedding* timestep_embedder;
  Embedding* class_embedder;  // class_embedder.embedding_table
};

}  // namespace mobius
