// Activation functions by their Hugging Face names (transformers/activations.py ACT2FN).
#pragma once

#include <string>

#include "nn/module.h"

namespace mobius {

// Applies activation `name` to x: silu/swish, gelu and gelu_python (erf), gelu_new / gelu_pytorch_tanh /
// gelu_fast (tanh approximation), quick_gelu (x * sigmoid(1.702 x), CLIP), relu, relu2 (relu
// squared), sigmoid, tanh.
// Throws mobius::Error naming `name` (field hidden_act) for anything else.
Value* activation(Ops& op, const std::string& name, Value* x);
// The activations above, plus "xielu" (a module with parameters: XIELU, which the MLP blocks
// register as their act_fn).
bool is_known_activation(const std::string& name);

// xIELU (arXiv:2411.13010; XIELUActivation._xielu_python in transformers/activations.py):
//   alpha_p' = softplus(alpha_p), alpha_n' = beta + softplus(alpha_n)
//   y = x > 0 ? alpha_p' * x^2 + beta * x : (exp(min(x, eps)) - 1 - x) * alpha_n' + beta * x
// Parameters alpha_p, alpha_n [1] and the scalars beta, eps [] are read from the checkpoint
// (transformers saves its beta/eps buffers in the state dict). x: any shape, model dtype.
class XIELU : public Module {
 public:
  explicit XIELU(DataType dtype);
  Value* forward(Ops& op, Value* x) const;
  Parameter *alpha_p, *alpha_n, *beta, *eps;
};

}  // namespace mobius
