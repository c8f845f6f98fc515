// Normalization layers. Computation in float32 (stash_type 1) like the HF modules, which upcast.
//   RMSNorm (LlamaRMSNorm, transformers/models/llama/modeling_llama.py):
//     y = x / sqrt(mean(x^2, -1) + eps) * weight           -> ONNX RMSNormalization (opset 23)
//   with offset 1 (GemmaRMSNorm): y = ... * (1 + weight), the offset folded into the graph.
//   LayerNorm (torch.nn.LayerNorm): optional bias          -> ONNX LayerNormalization (opset 17)
// x: [..., dim] -> same shape and dtype.
#pragma once

#include "nn/module.h"

namespace mobius {

struct NormOptions {
  int64_t dim;
  float eps = 1e-6f;
  DataType dtype = DataType::FLOAT;
  bool weight_offset_one = false;  // RMSNorm: scale by (1 + weight)
  bool bias = true;                // LayerNorm only
};

class RMSNorm : public Module {
 public:
  explicit RMSNorm(const NormOptions& o);
  Value* forward(Ops& op, Value* x) const;
  Parameter* weight;

 private:
  NormOptions o_;
};

class LayerNorm : public Module {
 public:
  explicit LayerNorm(const NormOptions& o);
  Value* forward(Ops& op, Value* x) const;
  Parameter* weight;
  Parameter* bias = nullptr;

 private:
  NormOptions o_;
};

}  // namespace mobius
