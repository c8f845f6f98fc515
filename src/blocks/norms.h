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

class Linear;  // blocks/linear.h

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

// A norm followed by a low-rank input-dependent sigmoid gate (Megatron's GatedNormWrapper;
// AXK2GatedRMSNorm, transformers/models/axk2/modular_axk2.py):
//   y = norm(x);  out = y * sigmoid(W_up(silu(W_down(y)))), the sigmoid in float32, the product
//   cast back to y's dtype
// Parameters as save_pretrained writes them (conversion_mapping.py "axk2" renames the model's
// mlp.fc1 / mlp.fc2 back to Megatron's W_down / W_up): norm (make_norm(o)), W_down [rank, dim] and
// W_up [dim, rank] (Linear weights), no bias.
// x: [..., dim] -> same shape and dtype.
class GatedNorm : public Norm {
 public:
  GatedNorm(const NormOptions& o, int64_t rank);
  Value* forward(Ops& op, Value* x) const override;
  Norm* norm;

 private:
  Linear *down_, *up_;
  DataType dtype_;
};

}  // namespace mobius
