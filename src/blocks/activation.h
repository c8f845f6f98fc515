// Activation functions by their Hugging Face names (transformers/activations.py ACT2FN).
#pragma once

#include <string>

#include "builder/ops.h"

namespace mobius {

// Applies activation `name` to x: silu/swish, gelu (erf), gelu_new / gelu_pytorch_tanh /
// gelu_fast (tanh approximation), relu, relu2 (relu squared), sigmoid, tanh.
// Throws mobius::Error naming `name` (field hidden_act) for anything else.
Value* activation(Ops& op, const std::string& name, Value* x);
bool is_known_activation(const std::string& name);

}  // namespace mobius
