#include "eval/op_util.h"

#include <algorithm>
#include <cstring>

namespace mobius::eval {

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t k = 0; k < s.size(); ++k) r += (k ? ", " : "") + std::to_string(s[k]);
  return r + "]";
}

Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (int64_t d = static_cast<int64_t>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

int64_t normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    throw Error(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

namespace {
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
}  // namespace

bool has_attr(const onnx::NodeProto& n, const std::string& name) { return find_attr(n, name); }

int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t dflt) {
  const auto* a = find_attr(n, name);
  return a ? a->i() : dflt;
}

float attr_float(const onnx::NodeProto& n, const std::string& name, float dflt) {
  const auto* a = find_attr(n, name);
  return a ? a->f() : dflt;
}

std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = find_attr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

std::string attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& dflt) {
  const auto* a = find_attr(n, name);
  return a ? a->s() : dflt;
}

const Tensor* optional_input(const Inputs& in, size_t k) { return k < in.size() ? in[k] : nullptr; }

const Tensor& input(const Inputs& in, size_t k) {
  const Tensor* t = optional_input(in, k);
  if (!t) throw Error("input " + std::to_string(k) + " is missing");
  return *t;
}

const Tensor& float_input(const Inputs& in, size_t k) {
  const Tensor& t = input(in, k);
  if (t.dtype != DataType::FLOAT)
    throw Error("input " + std::to_string(k) + " is " + dtype_name(t.dtype) + ", expected FLOAT");
  return t;
}

std::vector<int64_t> int_values(const Tensor& t, const char* what) {
  if (t.dtype != DataType::INT64) throw Error(std::string(what) + " must be INT64, got " + dtype_name(t.dtype));
  return t.i;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    const int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error("shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[k] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Shape& s, const Shape& out) {
  MOBIUS_ASSERT(s.size() <= out.size(), "broadcast to a lower rank");
  const Shape st = strides_of(s);
  Shape r(out.size(), 0);
  const size_t lead = out.size() - s.size();
  for (size_t k = 0; k < s.size(); ++k) r[lead + k] = s[k] == 1 ? 0 : st[k];
  return r;
}

void copy_elements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t n) {
  MOBIUS_ASSERT(src.dtype == dst.dtype, "copy between dtypes");
  if (n <= 0) return;
  if (src.dtype == DataType::FLOAT)
    std::memcpy(dst.f.data() + dst_off, src.floats() + src_off, static_cast<size_t>(n) * sizeof(float));
  else
    std::memcpy(dst.i.data() + dst_off, src.i.data() + src_off, static_cast<size_t>(n) * sizeof(int64_t));
}

// --- Tensor --------------------------------------------------------------------------------------
int64_t Tensor::numel() const { return eval::numel(shape); }

Tensor Tensor::zeros(DataType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  const auto n = static_cast<size_t>(eval::numel(t.shape));
  if (dtype == DataType::FLOAT)
    t.f.assign(n, 0.0f);
  else if (dtype == DataType::INT64 || dtype == DataType::BOOL)
    t.i.assign(n, 0);
  else
    throw Error("element type " + dtype_name(dtype) + " is not supported by the evaluator (FLOAT, INT64, BOOL)");
  return t;
}

Tensor Tensor::of_floats(std::vector<int64_t> shape, std::vector<float> values) {
  MOBIUS_ASSERT(static_cast<int64_t>(values.size()) == eval::numel(shape), "value count");
  Tensor t;
  t.shape = std::move(shape);
  t.f = std::move(values);
  return t;
}

Tensor Tensor::of_ints(std::vector<int64_t> shape, std::vector<int64_t> values) {
  MOBIUS_ASSERT(static_cast<int64_t>(values.size()) == eval::numel(shape), "value count");
  Tensor t;
  t.dtype = DataType::INT64;
  t.shape = std::move(shape);
  t.i = std::move(values);
  return t;
}

}  // namespace mobius::eval
