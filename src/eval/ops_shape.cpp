// Shape and data-movement ops: Shape, Reshape, Transpose, Squeeze, Unsqueeze, Concat, Gather,
// Range, ReduceMax, ReduceSum, Identity, Expand, Slice, ScatterElements.
#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/op_util.h"

namespace mobius::eval {
namespace {

Tensor with_shape(const Tensor& x, Shape shape) {
  Tensor out = x;  // a weight stays a view of the mapped file
  out.shape = std::move(shape);
  return out;
}

// Shape (opset 21): the dims from `start` to `end` (negative counts from the back, clamped).
Outputs Shape_(const onnx::NodeProto& n, const Inputs& in) {
  const Shape& s = input(in, 0).shape;
  const auto rank = static_cast<int64_t>(s.size());
  auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clamp(attr_int(n, "start", 0));
  const int64_t end = clamp(attr_int(n, "end", rank));
  Shape dims(s.begin() + start, s.begin() + std::max(start, end));
  return {Tensor::of_ints({static_cast<int64_t>(dims.size())}, dims)};
}

// Reshape (opset 21, allowzero 0): 0 copies the input dim, one -1 is inferred.
Outputs Reshape(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& x = input(in, 0);
  if (attr_int(n, "allowzero", 0) != 0) throw Error("allowzero=1 is not implemented");
  Shape shape = int_values(input(in, 1), "shape");
  int64_t known = 1, infer = -1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0) {
      if (k >= x.shape.size()) throw Error("shape has 0 at axis " + std::to_string(k) + " past the input's rank");
      shape[k] = x.shape[k];
    }
    if (shape[k] == -1) {
      if (infer >= 0) throw Error("shape has more than one -1");
      infer = static_cast<int64_t>(k);
    } else {
      known *= shape[k];
    }
  }
  if (infer >= 0) shape[infer] = known ? x.numel() / known : 0;
  if (numel(shape) != x.numel())
    throw Error("cannot reshape " + shape_str(x.shape) + " to " + shape_str(shape));
  return {with_shape(x, shape)};
}

Outputs Transpose(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& x = input(in, 0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  Shape perm = attr_ints(n, "perm");
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  if (static_cast<int64_t>(perm.size()) != rank) throw Error("perm does not match the input's rank");
  const Shape st = strides_of(x.shape);
  Shape shape(perm.size()), in_strides(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    const int64_t p = normalize_axis(perm[d], rank, "perm entry");
    shape[d] = x.shape[p];
    in_strides[d] = st[p];
  }
  Tensor out = Tensor::zeros(x.dtype, shape);
  for_each_index<1>(shape, {in_strides},
                    [&](int64_t k, const std::array<int64_t, 1>& o) { copy_elements(x, o[0], out, k, 1); });
  return {std::move(out)};
}

// Unsqueeze (opset 13+): axes (input 1) index the output.
Outputs Unsqueeze(const onnx::NodeProto&, const Inputs& in) {
  const Tensor& x = input(in, 0);
  const Shape axes = int_values(input(in, 1), "axes");
  const auto rank = static_cast<int64_t>(x.shape.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) inserted[normalize_axis(a, rank)] = true;
  Shape shape;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) shape.push_back(inserted[d] ? 1 : x.shape.at(next++));
  return {with_shape(x, shape)};
}

// Squeeze (opset 13+): removes the listed size-1 axes (all size-1 axes without input 1).
Outputs Squeeze(const onnx::NodeProto&, const Inputs& in) {
  const Tensor& x = input(in, 0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  std::vector<bool> drop(rank, false);
  if (const Tensor* axes = optional_input(in, 1)) {
    for (int64_t a : int_values(*axes, "axes")) {
      const int64_t d = normalize_axis(a, rank);
      if (x.shape[d] != 1) throw Error("cannot squeeze axis " + std::to_string(d) + " of " + shape_str(x.shape));
      drop[d] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) drop[d] = x.shape[d] == 1;
  }
  Shape shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d]) shape.push_back(x.shape[d]);
  return {with_shape(x, shape)};
}

Outputs Concat(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& first = input(in, 0);
  const auto rank = static_cast<int64_t>(first.shape.size());
  const int64_t axis = normalize_axis(attr_int(n, "axis", 0), rank);
  Shape shape = first.shape;
  shape[axis] = 0;
  for (size_t j = 0; j < in.size(); ++j) {
    const Tensor& t = input(in, j);
    for (int64_t d = 0; d < rank; ++d)
      if (t.dtype != first.dtype || t.shape.size() != first.shape.size() || (d != axis && t.shape[d] != first.shape[d]))
        throw Error("inputs " + shape_str(first.shape) + " and " + shape_str(t.shape) + " do not concatenate on axis " +
                    std::to_string(axis));
    shape[axis] += t.shape[axis];
  }
  Tensor out = Tensor::zeros(first.dtype, shape);
  const int64_t outer = numel(Shape(shape.begin(), shape.begin() + axis));
  const int64_t inner = numel(Shape(shape.begin() + axis + 1, shape.end()));
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor* t : in) {
      const int64_t chunk = t->shape[axis] * inner;
      copy_elements(*t, o * chunk, out, at, chunk);
      at += chunk;
    }
  return {std::move(out)};
}

// Gather (opset 13): data.shape[:axis] + indices.shape + data.shape[axis+1:]; negative indices
// count from the back.
Outputs Gather(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& data = input(in, 0);
  const std::vector<int64_t> idx = int_values(input(in, 1), "indices");
  const int64_t axis = normalize_axis(attr_int(n, "axis", 0), static_cast<int64_t>(data.shape.size()));
  const int64_t dim = data.shape[axis];
  Shape shape(data.shape.begin(), data.shape.begin() + axis);
  shape.insert(shape.end(), input(in, 1).shape.begin(), input(in, 1).shape.end());
  shape.insert(shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  Tensor out = Tensor::zeros(data.dtype, shape);
  const int64_t outer = numel(Shape(data.shape.begin(), data.shape.begin() + axis));
  const int64_t inner = numel(Shape(data.shape.begin() + axis + 1, data.shape.end()));
  const auto count = static_cast<int64_t>(idx.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j) {
      const int64_t i = idx[j] < 0 ? idx[j] + dim : idx[j];
      if (i < 0 || i >= dim)
        throw Error("index " + std::to_string(idx[j]) + " is out of range for axis size " + std::to_string(dim));
      copy_elements(data, (o * dim + i) * inner, out, (o * count + j) * inner, inner);
    }
  return {std::move(out)};
}

// Range (opset 11): max(ceil((limit - start) / delta), 0) elements start + k * delta.
Outputs Range(const onnx::NodeProto&, const Inputs& in) {
  const Tensor& start = input(in, 0);
  const Tensor& limit = input(in, 1);
  const Tensor& delta = input(in, 2);
  if (start.numel() != 1 || limit.numel() != 1 || delta.numel() != 1) throw Error("inputs must be scalars");
  if (start.dtype != limit.dtype || start.dtype != delta.dtype) throw Error("inputs differ in element type");
  if (delta.at(0) == 0) throw Error("delta is 0");
  const auto count = static_cast<int64_t>(std::max(std::ceil((limit.at(0) - start.at(0)) / delta.at(0)), 0.0));
  Tensor out = Tensor::zeros(start.dtype, {count});
  for (int64_t k = 0; k < count; ++k) set_element(out, k, start.at(0) + static_cast<double>(k) * delta.at(0));
  return {std::move(out)};
}

// A reduction (opset 18: axes from input 1; none: every axis, unless noop_with_empty_axes):
// out = fold(init, x...) over the reduced axes, folded in double and rounded to x's dtype.
template <typename Fold>
Outputs reduce_axes(const onnx::NodeProto& n, const Inputs& in, double init, Fold fold) {
  const Tensor& x = input(in, 0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  const Tensor* axes_in = optional_input(in, 1);
  Shape axes = axes_in ? int_values(*axes_in, "axes") : Shape{};
  if (axes.empty()) {
    if (attr_int(n, "noop_with_empty_axes", 0)) return {x};
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  Shape kept = x.shape;  // the output with keepdims
  for (int64_t a : axes) kept[normalize_axis(a, rank)] = 1;
  std::vector<double> acc(static_cast<size_t>(numel(kept)), init);
  const Shape out_strides = broadcast_strides(kept, x.shape);
  for_each_index<1>(x.shape, {out_strides},
                    [&](int64_t k, const std::array<int64_t, 1>& o) { acc[o[0]] = fold(acc[o[0]], x.at(k)); });
  Tensor out = Tensor::zeros(x.dtype, kept);
  for (size_t k = 0; k < acc.size(); ++k) {
    if (x.dtype == DataType::INT64 && std::isinf(acc[k]))  // an empty ReduceMax: the lowest int64
      out.i[k] = std::numeric_limits<int64_t>::min();
    else
      set_element(out, static_cast<int64_t>(k), acc[k]);
  }
  if (!attr_int(n, "keepdims", 1)) {
    Shape shape;
    std::vector<bool> reduced(rank, false);
    for (int64_t a : axes) reduced[normalize_axis(a, rank)] = true;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d]) shape.push_back(x.shape[d]);
    out.shape = shape;
  }
  return {std::move(out)};
}

// ReduceMax (opset 18): NaN wins.
Outputs ReduceMax(const onnx::NodeProto& n, const Inputs& in) {
  return reduce_axes(n, in, -std::numeric_limits<double>::infinity(),
                     [](double acc, double v) { return std::isnan(v) || v > acc ? v : acc; });
}

// ReduceSum (opset 13: axes from input 1, as above).
Outputs ReduceSum(const onnx::NodeProto& n, const Inputs& in) {
  return reduce_axes(n, in, 0.0, [](double acc, double v) { return acc + v; });
}

Outputs Identity(const onnx::NodeProto&, const Inputs& in) { return {input(in, 0)}; }

// Expand (opset 13): x broadcast to the numpy broadcast of its shape and `shape` (input 1).
Outputs Expand(const onnx::NodeProto&, const Inputs& in) {
  const Tensor& x = input(in, 0);
  const Shape shape = broadcast_shapes(x.shape, int_values(input(in, 1), "shape"));
  Tensor out = Tensor::zeros(x.dtype, shape);
  for_each_index<1>(shape, {broadcast_strides(x.shape, shape)},
                    [&](int64_t k, const std::array<int64_t, 1>& o) { copy_elements(x, o[0], out, k, 1); });
  return {std::move(out)};
}

// Slice (opset 13): starts, ends, optional axes (default 0..n-1) and steps (default 1); negative
// starts / ends count from the back, then clamp to [0, dim] (step > 0) or [-1, dim - 1] (step < 0).
Outputs Slice(const onnx::NodeProto&, const Inputs& in) {
  const Tensor& x = input(in, 0);
  const auto rank = static_cast<int64_t>(x.shape.size());
  const Shape starts = int_values(input(in, 1), "starts"), ends = int_values(input(in, 2), "ends");
  Shape axes, steps;
  if (const Tensor* a = optional_input(in, 3)) axes = int_values(*a, "axes");
  else for (size_t k = 0; k < starts.size(); ++k) axes.push_back(static_cast<int64_t>(k));
  if (const Tensor* st = optional_input(in, 4)) steps = int_values(*st, "steps");
  else steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    throw Error("starts, ends, axes and steps differ in length");
  Shape first(rank, 0), step(rank, 1), shape = x.shape;
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t d = normalize_axis(axes[k], rank), dim = x.shape[d];
    if (steps[k] == 0) throw Error("step 0");
    auto at = [&](int64_t v) { return v < 0 ? v + dim : v; };
    int64_t b = at(starts[k]), e = at(ends[k]);
    if (steps[k] > 0) {
      b = std::clamp(b, int64_t{0}, dim), e = std::clamp(e, int64_t{0}, dim);
      shape[d] = e > b ? (e - b + steps[k] - 1) / steps[k] : 0;
    } else {
      b = std::clamp(b, int64_t{0}, dim - 1), e = std::clamp(e, int64_t{-1}, dim - 1);
      shape[d] = b > e ? (b - e - steps[k] - 1) / -steps[k] : 0;
    }
    first[d] = b, step[d] = steps[k];
  }
  const Shape st = strides_of(x.shape);
  Shape in_strides(rank);
  int64_t base = 0;
  for (int64_t d = 0; d < rank; ++d) in_strides[d] = st[d] * step[d], base += st[d] * first[d];
  Tensor out = Tensor::zeros(x.dtype, shape);
  for_each_index<1>(shape, {in_strides},
                    [&](int64_t k, const std::array<int64_t, 1>& o) { copy_elements(x, base + o[0], out, k, 1); });
  return {std::move(out)};
}

// ScatterElements (opset 18, reduction none): data with data[i with axis := indices[i]] =
// updates[i] for every position i of indices (the shape of updates); negative indices count from
// the back.
Outputs ScatterElements(const onnx::NodeProto& n, const Inputs& in) {
  const Tensor& data = input(in, 0);
  const Tensor& idx = input(in, 1);
  const Tensor& upd = input(in, 2);
  if (attr_string(n, "reduction", "none") != "none") throw Error("reduction other than none is not implemented");
  const auto rank = static_cast<int64_t>(data.shape.size());
  const int64_t axis = normalize_axis(attr_int(n, "axis", 0), rank);
  if (upd.dtype != data.dtype) throw Error("updates and data differ in element type");
  if (idx.shape != upd.shape || static_cast<int64_t>(idx.shape.size()) != rank)
    throw Error("indices " + shape_str(idx.shape) + " and updates " + shape_str(upd.shape) + " must have one shape of data's rank");
  for (int64_t d = 0; d < rank; ++d)
    if (idx.shape[d] > data.shape[d]) throw Error("indices " + shape_str(idx.shape) + " exceed data " + shape_str(data.shape));
  const std::vector<int64_t> where = int_values(idx, "indices");
  Tensor out = data;
  if (out.view) out.f.assign(out.view, out.view + out.numel()), out.view = nullptr;
  const Shape st = strides_of(data.shape);
  Shape idx_in_data(rank);  // strides of data, read in the index tensor's axes
  for (int64_t d = 0; d < rank; ++d) idx_in_data[d] = d == axis ? 0 : st[d];
  const int64_t dim = data.shape[axis];
  for_each_index<1>(idx.shape, {idx_in_data}, [&](int64_t k, const std::array<int64_t, 1>& o) {
    const int64_t i = where[k] < 0 ? where[k] + dim : where[k];
    if (i < 0 || i >= dim)
      throw Error("index " + std::to_string(where[k]) + " is out of range for axis size " + std::to_string(dim));
    copy_elements(upd, k, out, o[0] + i * st[axis], 1);
  });
  return {std::move(out)};
}

}  // namespace

void add_shape_ops(std::map<std::string, OpFn>& t) {
  t["Shape"] = Shape_, t["Reshape"] = Reshape, t["Transpose"] = Transpose;
  t["Unsqueeze"] = Unsqueeze, t["Squeeze"] = Squeeze, t["Concat"] = Concat, t["Gather"] = Gather;
  t["Range"] = Range, t["ReduceMax"] = ReduceMax, t["ReduceSum"] = ReduceSum, t["Identity"] = Identity;
  t["Expand"] = Expand, t["Slice"] = Slice, t["ScatterElements"] = ScatterElements;
}

}  // namespace mobius::eval
