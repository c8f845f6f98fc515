#include "blocks/activation.h"

#include "util/error.h"

namespace mobius {

bool is_known_activation(const std::string& n) {
  return n == "silu" || n == "swish" || n == "gelu" || n == "gelu_new" ||
         n == "gelu_pytorch_tanh" || n == "gelu_fast" || n == "relu" || n == "relu2" ||
         n == "sigmoid" || n == "tanh";
}

Value* activation(Ops& op, const std::string& n, Value* x) {
  if (n == "silu" || n == "swish") return op.Mul(x, op.Sigmoid(x));
  if (n == "gelu") return op.Gelu(x);
  if (n == "gelu_new" || n == "gelu_pytorch_tanh" || n == "gelu_fast")
    return op.Gelu(x, {.approximate = "tanh"});
  if (n == "relu") return op.Relu(x);
  if (n == "relu2") {
    Value* r = op.Relu(x);
    return op.Mul(r, r);
  }
  if (n == "sigmoid") return op.Sigmoid(x);
  if (n == "tanh") return op.Tanh(x);
  throw Error("hidden_act: unsupported activation '" + n + "'");
}

}  // namespace mobius
