// diffusers' timestep embeddings (diffusers/models/embeddings.py):
//   timestep_sinusoids: Timesteps / get_timestep_embedding (max_period 10000, scale 1): for t [n],
//     half = dim / 2, freq[k] = exp(-ln(10000) * k / (half - downscale_freq_shift)),
//     e = [sin(t * freq), cos(t * freq)] (flip_sin_to_cos: [cos, sin]), zero-padded by one column
//     for an odd dim. Computed in float32 (the reference casts the timesteps with .float()), then
//     cast to `dtype` (t_emb.to(sample.dtype)).
//   TimestepEmbedding: linear_2(act(linear_1(x))) (no cond_proj, no post_act), children linear_1,
//     linear_2 (Linear with bias).
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

}  // namespace mobius
