// LayerNorm over head_dim with a different weight per attention head.
// x: [batch, seq, num_heads, head_dim] -> same shape and dtype.
//   stacked weight [num_heads, head_dim], no bias: CohereLayerNorm with a (num_heads, head_dim)
//     hidden size (transformers/models/cohere/modeling_cohere.py, q_norm / k_norm)
//   one LayerNorm per head, norms.{h}.weight [head_dim] (+ bias): StableLmLayerNormPerHead
//     (transformers/models/stablelm/modeling_stablelm.py, q_layernorm / k_layernorm)
// Lowered to LayerNormalization with a unit scale (the op's scale has the normalized shape
// [head_dim]) followed by Mul with the [num_heads, head_dim] weight (and Add of the bias); the
// per-head weights are concatenated in the graph.
#pragma once

#include <vector>

#include "blocks/norms.h"

namespace mobius {

struct HeadNormOptions {
  int64_t num_heads;
  int64_t head_dim;
  float eps = 1e-5f;
  bool bias = false;
  bool norm_per_head = false;  // norms.{h} modules instead of one stacked weight
  DataType dtype = DataType::FLOAT;
};

class PerHeadLayerNorm : public Norm {
 public:
  explicit PerHeadLayerNorm(const HeadNormOptions& o);
  Value* forward(Ops& op, Value* x) const override;

  Parameter* weight = nullptr;  // stacked layout
  Parameter* bias = nullptr;
  std::vector<LayerNorm*> norms;  // per-head layout

 private:
  HeadNormOptions o_;
};

}  // namespace mobius
