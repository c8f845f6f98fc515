#include "blocks/activation.h"

#include "util/error.h"

namespace mobius {

bool is_known_activation(const std::string& n) {
  return n == "silu" || n == "swish" || n == "gelu" || n == "gelu_python" || n == "gelu_new" ||
         n == "gelu_pytorch_tanh" || n == "gelu_fast" || n == "relu" || n == "relu2" ||
         n == "sigmoid" || n == "tanh" || n == "xielu" || n == "quick_gelu";
}

Value* activation(Ops& op, const std::string& n, Value* x) {
  if (n == "silu" || n == "swish") return op.Mul(x, op.Sigmoid(x));
  if (n == "gelu" || n == "gelu_python") return op.Gelu(x);  // gelu_python: the same erf form, in Python
  if (n == "gelu_new" || n == "gelu_pytorch_tanh" || n == "gelu_fast")
    return op.Gelu(x, {.approximate = "tanh"});
  if (n == "relu") return op.Relu(x);
  if (n == "relu2") {
    Value* r = op.Relu(x);
    return op.Mul(r, r);
  }
  if (n == "quick_gelu") return op.Mul(x, op.Sigmoid(op.Mul(x, 1.702)));  // QuickGELUActivation
  if (n == "sigmoid") return op.Sigmoid(x);
  if (n == "tanh") return op.Tanh(x);
  throw Error("hidden_act: unsupported activation '" + n + "'");
}

XIELU::XIELU(DataType dtype) {
  alpha_p = param("alpha_p", {1}, dtype);
  alpha_n = param("alpha_n", {1}, dtype);
  beta = param("beta", {}, dtype);
  eps = param("eps", {}, dtype);
}

Value* XIELU::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  Value* b = beta->value(op);
  Value* ap = op.Softplus(alpha_p->value(op));
  Value* an = op.Add(b, op.Softplus(alpha_n->value(op)));
  Value* bx = op.Mul(b, x);
  Value* pos = op.Add(op.Mul(op.Mul(ap, x), x), bx);
  Value* expm1 = op.Sub(op.Exp(op.Min(x, eps->value(op))), 1.0);
  Value* neg = op.Add(op.Mul(op.Sub(expm1, x), an), bx);
  return op.Where(op.Greater(x, 0.0), pos, neg);
}

}  // namespace mobius
