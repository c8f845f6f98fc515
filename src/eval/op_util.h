// Helpers shared by the evaluator's op files (eval/ops_*.cpp): attributes, inputs, numpy-style
// broadcasting (onnx/docs/Broadcasting.md) and strided iteration.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "eval/ops.h"
#include "util/error.h"

namespace mobius::eval {

using Shape = std::vector<int64_t>;
using Inputs = std::vector<const Tensor*>;
using Outputs = std::vector<Tensor>;

int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);
// Row-major strides of a contiguous tensor of shape `s`.
Shape strides_of(const Shape& s);
// `axis` in [-rank, rank) as a non-negative axis; throws mobius::Error naming `what` otherwise.
int64_t normalize_axis(int64_t axis, int64_t rank, const char* what = "axis");

// Attributes by name, with the spec's default when absent.
int64_t attr_int(const onnx::NodeProto& n, const std::string& name, int64_t dflt);
float attr_float(const onnx::NodeProto& n, const std::string& name, float dflt);
bool has_attr(const onnx::NodeProto& n, const std::string& name);
std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const std::string& name);
std::string attr_string(const onnx::NodeProto& n, const std::string& name, const std::string& dflt);

// Input k; throws mobius::Error when it is absent.
const Tensor& input(const Inputs& in, size_t k);
// Input k or nullptr when absent.
const Tensor* optional_input(const Inputs& in, size_t k);
// The values of an INT64 tensor (shapes, axes); throws mobius::Error for another dtype.
std::vector<int64_t> int_values(const Tensor& t, const char* what);
// Throws mobius::Error unless t.dtype == FLOAT.
const Tensor& float_input(const Inputs& in, size_t k);

// The numpy broadcast of two shapes; throws mobius::Error when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Strides of a tensor of shape `s` read as the (larger or equal) broadcast shape `out`: 0 on the
// axes `s` is broadcast along.
Shape broadcast_strides(const Shape& s, const Shape& out);

// Calls fn(k, offsets) for every element k (row-major) of `shape`, where offsets[j] is the element
// offset into operand j of an operand with strides strides[j] (in `shape`'s axes).
template <size_t N, typename Fn>
void for_each_index(const Shape& shape, const std::array<Shape, N>& strides, Fn&& fn) {
  const int64_t total = numel(shape);
  const int64_t rank = static_cast<int64_t>(shape.size());
  Shape idx(shape.size(), 0);
  std::array<int64_t, N> off{};
  for (int64_t k = 0; k < total; ++k) {
    fn(k, off);
    for (int64_t d = rank - 1; d >= 0; --d) {
      for (size_t j = 0; j < N; ++j) off[j] += strides[j][d];
      if (++idx[d] < shape[d]) break;
      for (size_t j = 0; j < N; ++j) off[j] -= strides[j][d] * shape[d];
      idx[d] = 0;
    }
  }
}

// Writes element `k` of `t` from a double (FLOAT rounds to float, INT64 truncates, BOOL != 0).
inline void set_element(Tensor& t, int64_t k, double v) {
  if (t.dtype == DataType::FLOAT)
    t.f[k] = static_cast<float>(v);
  else if (t.dtype == DataType::BOOL)
    t.i[k] = v != 0.0;
  else
    t.i[k] = static_cast<int64_t>(v);
}

// Copies n elements from src[src_off] to dst[dst_off] (same dtype).
void copy_elements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t n);

// Registration of each op file's functions into the table.
void add_elementwise_ops(std::map<std::string, OpFn>& table);
void add_shape_ops(std::map<std::string, OpFn>& table);
void add_nn_ops(std::map<std::string, OpFn>& table);

}  // namespace mobius::eval
