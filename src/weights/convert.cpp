#include "weights/convert.h"

#include <cstring>

#include "util/error.h"
#include "util/float16.h"

namespace mobius {
namespace {

template <DataType T> struct Elem;
// load() widens to float (double for DOUBLE); store() rounds once from either.
template <> struct Elem<DataType::FLOAT> {
  using type = float;
  static float load(float x) { return x; }
  static float store(float x) { return x; }
  static float store(double x) { return static_cast<float>(x); }
};
template <> struct Elem<DataType::DOUBLE> {
  using type = double;
  static double load(double x) { return x; }
};
template <> struct Elem<DataType::FLOAT16> {
  using type = uint16_t;
  static float load(uint16_t x) { return f16_to_f32(x); }
  static uint16_t store(float x) { return f32_to_f16(x); }
  static uint16_t store(double x) { return f64_to_f16(x); }
};
template <> struct Elem<DataType::BFLOAT16> {
  using type = uint16_t;
  static float load(uint16_t x) { return bf16_to_f32(x); }
  static uint16_t store(float x) { return f32_to_bf16(x); }
  static uint16_t store(double x) { return f64_to_bf16(x); }
};

template <DataType S, DataType D>
void convert_loop(const uint8_t* in, uint8_t* out, int64_t rows, int64_t cols, bool transpose) {
  using SrcT = typename Elem<S>::type;
  using DstT = typename Elem<D>::type;
  const SrcT* s = reinterpret_cast<const SrcT*>(in);
  DstT* d = reinterpret_cast<DstT*>(out);
  if (!transpose) {
    const int64_t n = rows * cols;
    for (int64_t i = 0; i < n; ++i) d[i] = Elem<D>::store(Elem<S>::load(s[i]));
    return;
  }
  constexpr int64_t B = 64;  // cache blocking
  for (int64_t r0 = 0; r0 < rows; r0 += B)
    for (int64_t c0 = 0; c0 < cols; c0 += B)
      for (int64_t r = r0; r < std::min(rows, r0 + B); ++r)
        for (int64_t c = c0; c < std::min(cols, c0 + B); ++c)
          d[c * rows + r] = Elem<D>::store(Elem<S>::load(s[r * cols + c]));
}

template <DataType D>
void convert_from(DataType src, const uint8_t* in, uint8_t* out, int64_t rows, int64_t cols, bool t) {
  switch (src) {
    case DataType::FLOAT: return convert_loop<DataType::FLOAT, D>(in, out, rows, cols, t);
    case DataType::DOUBLE: return convert_loop<DataType::DOUBLE, D>(in, out, rows, cols, t);
    case DataType::FLOAT16: return convert_loop<DataType::FLOAT16, D>(in, out, rows, cols, t);
    case DataType::BFLOAT16: return convert_loop<DataType::BFLOAT16, D>(in, out, rows, cols, t);
    default: MOBIUS_ASSERT(false, "convert_from: unsupported source");
  }
}

void transpose_bytes(const uint8_t* in, uint8_t* out, int64_t rows, int64_t cols, size_t esize) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(out + (c * rows + r) * esize, in + (r * cols + c) * esize, esize);
}

// One [rows, cols] matrix (or a flat run when rows == 1 and !transpose) from `in` to `out`.
void convert_matrix(const TensorView& src, DataType dst, bool transpose, const uint8_t* in,
                    uint8_t* out, int64_t rows, int64_t cols) {
  if (src.dtype == dst) {
    transpose_bytes(in, out, rows, cols, dtype_size(dst));
    return;
  }
  if (!is_float(src.dtype) || !is_float(dst) || dst == DataType::DOUBLE)
    throw Error(*src.file + ": tensor '" + src.name + "': cannot convert " +
                dtype_name(src.dtype) + " to " + dtype_name(dst));
  switch (dst) {
    case DataType::FLOAT: return convert_from<DataType::FLOAT>(src.dtype, in, out, rows, cols, transpose);
    case DataType::FLOAT16: return convert_from<DataType::FLOAT16>(src.dtype, in, out, rows, cols, transpose);
    case DataType::BFLOAT16: return convert_from<DataType::BFLOAT16>(src.dtype, in, out, rows, cols, transpose);
    default: break;
  }
}

}  // namespace

void convert_tensor(const TensorView& src, DataType dst, bool transpose, std::span<uint8_t> out) {
  int64_t n = 1;
  for (int64_t d : src.shape) n *= d;
  MOBIUS_ASSERT(out.size() == static_cast<size_t>(n) * dtype_size(dst), "convert_tensor: output size");
  MOBIUS_ASSERT(!transpose || src.shape.size() >= 2, "convert_tensor: transpose needs >= 2-D");
  // A transpose swaps the last two axes of each matrix in the batch of leading axes.
  const size_t rank = src.shape.size();
  const int64_t rows = transpose ? src.shape[rank - 2] : 1;
  const int64_t cols = transpose ? src.shape[rank - 1] : n;
  const int64_t batch = n / std::max<int64_t>(rows * cols, 1);
  if (src.dtype == dst && !transpose) {
    std::memcpy(out.data(), src.data.data(), out.size());
    return;
  }
  const size_t in_step = static_cast<size_t>(rows * cols) * dtype_size(src.dtype);
  const size_t out_step = static_cast<size_t>(rows * cols) * dtype_size(dst);
  for (int64_t i = 0; i < batch; ++i)
    convert_matrix(src, dst, transpose, src.data.data() + i * in_step, out.data() + i * out_step,
                   rows, cols);
}

}  // namespace mobius
