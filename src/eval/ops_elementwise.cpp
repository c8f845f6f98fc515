// Element-wise ops with numpy broadcasting: arithmetic, comparisons, logic, unary math, Cast,
// Where. Values pass through double: for FLOAT inputs, +, -, *, / and sqrt rounded back to float
// equal the float32 operation exactly (double has more than twice float's precision).
#include <cmath>

#include "eval/op_util.h"

namespace mobius::eval {
namespace {

using BinaryFn = double (*)(double, double);

bool is_logic(DataType t) { return t == DataType::BOOL; }

// out[k] = f(a[k'], b[k'']) over the broadcast shape; the output has a's dtype, or BOOL.
Outputs binary(const Inputs& in, BinaryFn f, bool to_bool) {
  const Tensor& a = input(in, 0);
  const Tensor& b = input(in, 1);
  if (a.dtype != b.dtype)
    throw Error("operands are " + dtype_name(a.dtype) + " and " + dtype_name(b.dtype));
  const Shape shape = broadcast_shapes(a.shape, b.shape);
  Tensor out = Tensor::zeros(to_bool ? DataType::BOOL : a.dtype, shape);
  for_each_index<2>(shape, {broadcast_strides(a.shape, shape), broadcast_strides(b.shape, shape)},
                    [&](int64_t k, const std::array<int64_t, 2>& o) { set_element(out, k, f(a.at(o[0]), b.at(o[1]))); });
  return {std::move(out)};
}

Outputs arithmetic(const Inputs& in, BinaryFn f) {
  if (is_logic(input(in, 0).dtype)) throw Error("arithmetic on BOOL");
  return binary(in, f, false);
}

Outputs logic(const Inputs& in, BinaryFn f) {
  if (!is_logic(input(in, 0).dtype)) throw Error("logic op on " + dtype_name(input(in, 0).dtype));
  return binary(in, f, true);
}

Outputs Add(const onnx::NodeProto&, const Inputs& in) { return arithmetic(in, [](double a, double b) { return a + b; }); }
Outputs Sub(const onnx::NodeProto&, const Inputs& in) { return arithmetic(in, [](double a, double b) { return a - b; }); }
Outputs Mul(const onnx::NodeProto&, const Inputs& in) { return arithmetic(in, [](double a, double b) { return a * b; }); }
Outputs Div(const onnx::NodeProto&, const Inputs& in) {
  if (input(in, 0).dtype == DataType::INT64)
    return arithmetic(in, [](double a, double b) {
      if (b == 0) throw Error("integer division by zero");
      return std::trunc(a / b);
    });
  return arithmetic(in, [](double a, double b) { return a / b; });
}
Outputs Pow(const onnx::NodeProto&, const Inputs& in) {
  return arithmetic(in, [](double a, double b) { return static_cast<double>(std::pow(static_cast<float>(a), static_cast<float>(b))); });
}
// Max and Min are variadic in the spec; the graphs use two operands.
Outputs Max(const onnx::NodeProto&, const Inputs& in) {
  if (in.size() != 2) throw Error("Max with " + std::to_string(in.size()) + " inputs is not implemented (2)");
  return arithmetic(in, [](double a, double b) { return std::isnan(a) || a > b ? a : b; });
}
Outputs Min(const onnx::NodeProto&, const Inputs& in) {
  if (in.size() != 2) throw Error("Min with " + std::to_string(in.size()) + " inputs is not implemented (2)");
  return arithmetic(in, [](double a, double b) { return std::isnan(a) || a < b ? a : b; });
}
Outputs Equal(const onnx::NodeProto&, const Inputs& in) { return binary(in, [](double a, double b) -> double { return a == b; }, true); }
Outputs Less(const onnx::NodeProto&, const Inputs& in) { return binary(in, [](double a, double b) -> double { return a < b; }, true); }
Outputs LessOrEqual(const onnx::NodeProto&, const Inputs& in) { return binary(in, [](double a, double b) -> double { return a <= b; }, true); }
Outputs Greater(const onnx::NodeProto&, const Inputs& in) { return binary(in, [](double a, double b) -> double { return a > b; }, true); }
Outputs GreaterOrEqual(const onnx::NodeProto&, const Inputs& in) { return binary(in, [](double a, double b) -> double { return a >= b; }, true); }
Outputs And(const onnx::NodeProto&, const Inputs& in) { return logic(in, [](double a, double b) -> double { return a != 0 && b != 0; }); }
Outputs Or(const onnx::NodeProto&, const Inputs& in) { return logic(in, [](double a, double b) -> double { return a != 0 || b != 0; }); }

Outputs Not(const onnx::NodeProto&, const Inputs& in) {
  const Tensor& x = input(in, 0);
  if (!is_logic(x.dtype)) throw Error("Not on " + dtype_name(x.dtype));
  Tensor out = x;
  for (int64_t& v : out.i) v = !v;
  return {std::move(out)};
}

// Float unary ops: y = f(x) computed in float.
template <float (*F)(float)>
Outputs unary(const onnx::NodeProto&, const Inputs& in) {
  const Tensor& x = float_input(in, 0);
  Tensor out = Tensor::zeros(DataType::FLOAT, x.shape);
  const float* p = x.floats();
  for (size_t k = 0; k < out.f.size(); ++k) out.f[k] = F(p[k]);
  return {std::move(out)};
}

float cos_f(float x) { return std::cos(x); }
float sin_f(float x) { return std::sin(x); }
float exp_f(float x) { return std::exp(x); }
float tanh_f(float x) { return std::tanh(x); }
float sqrt_f(float x) { return std::sqrt(x); }
float neg_f(float x) { return -x; }
float reciprocal_f(float x) { return 1.0f / x; }
float relu_f(float x) { return x > 0.0f ? x : 0.0f; }
float sigmoid_f(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Gelu (opset 20): approximate "none" x/2 (1 + erf(x/sqrt 2)), "tanh" the tanh approximation.
Outputs Gelu(const onnx::NodeProto& n, const Inputs& in) {
  const std::string approx = attr_string(n, "approximate", "none");
  const Tensor& x = float_input(in, 0);
  Tensor out = Tensor::zeros(DataType::FLOAT, x.shape);
  const float* p = x.floats();
  for (size_t k = 0; k < out.f.size(); ++k) {
    const double v = p[k];
    if (approx == "tanh")
      out.f[k] = static_cast<float>(0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
    else if (approx == "none")
      out.f[k] = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    else
      throw Error("approximate='" + approx + "' is not defined");
  }
  return {std::move(out)};
}

// Cast between FLOAT, INT64 and BOOL (float -> int truncates toward zero).
Outputs Cast(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& x = input(in, 0);
  Tensor out = Tensor::zeros(static_cast<DataType>(attr_int(n, "to", 0)), x.shape);
  for (int64_t k = 0; k < x.numel(); ++k) set_element(out, k, x.at(k));
  return {std::move(out)};
}

// Where(cond, x, y): x where cond, else y; three-way broadcast.
Outputs Where(const onnx::NodeProto&, const Inputs& in) {
  const Tensor& c = input(in, 0);
  const Tensor& x = input(in, 1);
  const Tensor& y = input(in, 2);
  if (c.dtype != DataType::BOOL) throw Error("condition must be BOOL");
  if (x.dtype != y.dtype) throw Error("X and Y are " + dtype_name(x.dtype) + " and " + dtype_name(y.dtype));
  const Shape shape = broadcast_shapes(c.shape, broadcast_shapes(x.shape, y.shape));
  Tensor out = Tensor::zeros(x.dtype, shape);
  for_each_index<3>(shape,
                    {broadcast_strides(c.shape, shape), broadcast_strides(x.shape, shape),
                     broadcast_strides(y.shape, shape)},
                    [&](int64_t k, const std::array<int64_t, 3>& o) {
                      set_element(out, k, c.i[o[0]] ? x.at(o[1]) : y.at(o[2]));
                    });
  return {std::move(out)};
}

}  // namespace

void add_elementwise_ops(std::map<std::string, OpFn>& t) {
  t["Add"] = Add, t["Sub"] = Sub, t["Mul"] = Mul, t["Div"] = Div, t["Pow"] = Pow;
  t["Max"] = Max, t["Min"] = Min;
  t["Equal"] = Equal, t["Less"] = Less, t["LessOrEqual"] = LessOrEqual, t["Greater"] = Greater;
  t["GreaterOrEqual"] = GreaterOrEqual, t["And"] = And, t["Or"] = Or, t["Not"] = Not;
  t["Cos"] = unary<cos_f>, t["Sin"] = unary<sin_f>, t["Exp"] = unary<exp_f>, t["Tanh"] = unary<tanh_f>;
  t["Sqrt"] = unary<sqrt_f>, t["Neg"] = unary<neg_f>, t["Reciprocal"] = unary<reciprocal_f>;
  t["Relu"] = unary<relu_f>, t["Sigmoid"] = unary<sigmoid_f>, t["Gelu"] = Gelu;
  t["Cast"] = Cast, t["Where"] = Where;
}

}  // namespace mobius::eval
