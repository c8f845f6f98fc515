// diffusers' adaptive layer norms (diffusers/models/normalization.py), the timestep conditioning of
// the DiT-family transformers: emb = linear(silu(temb)) [batch, chunks * dim] cut into `chunks`
// pieces; the norm is a LayerNorm without affine parameters (eps) and the modulation
// norm(x) * (1 + scale) + shift:
//   AdaLayerNormZero        chunks 6: shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp
//   AdaLayerNormZeroSingle  chunks 3: shift_msa, scale_msa, gate_msa
//   AdaLayerNormContinuous  chunks 2: scale, shift (that order), conditioning_dim wide
// Children: linear (Linear with bias, conditioning_dim -> chunks * dim) and norm (no parameters),
// as the diffusers state dict.
#pragma once

#include <vector>

#include "blocks/linear.h"
#include "blocks/norms.h"

namespace mobius {

struct AdaLayerNormOptions {
  int64_t dim;
  int64_t conditioning_dim;
  int64_t chunks;
  float eps = 1e-6f;
  DataType dtype = DataType::FLOAT;
};

class AdaLayerNorm : public Module {
 public:
  explicit AdaLayerNorm(const AdaLayerNormOptions& o);
  // temb [batch, conditioning_dim] -> `chunks` values, each [batch, 1, dim] (broadcast over tokens).
  std::vector<Value*> chunks(Ops& op, Value* temb) const;
  // x [batch, seq, dim] -> layer_norm(x) * (1 + scale) + shift, shift and scale [batch, 1, dim].
  Value* modulate(Ops& op, Value* x, Value* shift, Value* scale) const;
  Linear* linear;
  LayerNorm* norm;  // no parameters

 private:
  AdaLayerNormOptions o_;
};

}  // namespace mobius
