// Normalization layers. Computation in float32 (stash_type 1) like the HF modules, which upcast.
//   RMSNorm (LlamaRMSNorm, transformers/models/llama/modeling_llama.py):
//     y = x / sqrt(mean(x^2, -1) + eps) * weight           -> ONNX RMSNormalization (opset 23)
//   with offset 1 (GemmaRMSNorm, transformers/models/gemma/modeling_gemma.py):
//     y = (x / sqrt(mean(x^2, -1) + eps) * (1 + weight)) in float32, cast back to x's dtype
//     (Cast -> Add(weight, 1) -> RMSNormalization -> Cast; the casts only for float16/bfloat16).
//   LayerNorm (torch.nn.LayerNorm; CohereLayerNorm is one without bias):
//     y = (x - mean) / sqrt(var + eps) * weight (+ bias)   -> ONNX LayerNormalization (opset 17)
// Options of both:
//   weight_offset_one: scale by (1 + weight), the offset folded into the graph (GemmaRMSNorm as
//     above; NemotronLayerNorm1P, transformers/models/nemotron/modeling_nemotron.py)
//   elementwise_affine = false: no parameters, scale 1 (torch.nn.LayerNorm's argument; OlmoLayerNorm,
//     transformers/models/olmo/modeling_olmo.py; Llama4TextL2Norm as NanoChatRMSNorm)
// x: [..., dim] -> same shape and dtype.
#pragma once

#include <memory>
#include <string>

#include "nn/module.h"

namespace mobius {

enum class NormKind { RMSNorm, LayerNorm };

struct NormOptions {
  int64_t dim;
  float eps = 1e-6f;
  DataType dtype = DataType::FLOAT;
  bool weight_offset_one = false;  // scale by (1 + weight)
  bool bias = true;                // LayerNorm only
  NormKind kind = NormKind::RMSNorm;  // used by make_norm
  bool elementwise_affine = true;  // false: no weight and no bias
};

// An RMSNorm (with weight) over a block's inner activations right before its output projection,
// under `name` in the block (BitNet's attn_sub_norm before o_proj, ffn_sub_norm before down_proj;
// transformers/models/bitnet/modular_bitnet.py).
struct SubNorm {
  std::string name;
  float eps;
};

// A normalization over the last axis; the kinds below.
class Norm : public Module {
 public:
  virtual Value* forward(Ops& op, Value* x) const = 0;
};

class RMSNorm : public Norm {
 public:
  explicit RMSNorm(const NormOptions& o);
  Value* forward(Ops& op, Value* x) const override;
  Parameter* weight = nullptr;  // null without elementwise_affine

 private:
  NormOptions o_;
};

class LayerNorm : public Norm {
 public:
  explicit LayerNorm(const NormOptions& o);
  Value* forward(Ops& op, Value* x) const override;
  Parameter* weight = nullptr;  // null without elementwise_affine
  Parameter* bias = nullptr;

 private:
  NormOptions o_;
};

// The norm of kind o.kind (register it with Module::adopt).
std::unique_ptr<Norm> make_norm(const NormOptions& o);

}  // namespace mobius
