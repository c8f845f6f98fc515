#include "weights/convert.h"

#include <algorithm>
#include <cstring>

#include "util/error.h"

namespace mobius {
namespace {

constexpr int64_t kTile = 64;

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Copies a converted tile (tile[r][c], `tw` elements per row, row stride kTile) transposed into
// `out` (element (r, c) at out[c * stride + r]).
template <size_t Size>
void untile(const uint8_t* tile, int64_t th, int64_t tw, uint8_t* out, int64_t stride) {
  for (int64_t c = 0; c < tw; ++c)
    for (int64_t r = 0; r < th; ++r)
      std::memcpy(out + (c * stride + r) * Size, tile + (r * kTile + c) * Size, Size);
}

void untile(size_t size, const uint8_t* tile, int64_t th, int64_t tw, uint8_t* out, int64_t stride) {
  switch (size) {
    case 1: return untile<1>(tile, th, tw, out, stride);
    case 2: return untile<2>(tile, th, tw, out, stride);
    case 4: return untile<4>(tile, th, tw, out, stride);
    default: return untile<8>(tile, th, tw, out, stride);
  }
}

}  // namespace

int64_t output_rows(const std::vector<int64_t>& shape, bool transpose) {
  if (shape.empty()) return 1;
  const int64_t last = transpose ? shape[shape.size() - 2] : shape.back();
  return last == 0 ? 0 : elements(shape) / last;
}

void convert_rows(const TensorView& src, DataType dst, bool transpose, int64_t row_begin,
                  int64_t row_end, std::span<uint8_t> out, Isa isa) {
  const ConvertFn kernel = convert_kernel(src.dtype, dst, isa);
  if (!kernel)
    throw Error(*src.file + ": tensor '" + src.name + "': cannot convert " +
                dtype_name(src.dtype) + " to " + dtype_name(dst));
  MOBIUS_ASSERT(!transpose || src.shape.size() >= 2, "convert_rows: transpose needs >= 2-D");
  MOBIUS_ASSERT(0 <= row_begin && row_begin <= row_end && row_end <= output_rows(src.shape, transpose),
                "convert_rows: row range");
  const size_t ssize = dtype_size(src.dtype), dsize = dtype_size(dst);
  const size_t rank = src.shape.size();
  if (!transpose) {
    const int64_t cols = rank ? src.shape.back() : 1;
    const size_t n = static_cast<size_t>((row_end - row_begin) * cols);
    MOBIUS_ASSERT(out.size() == n * dsize, "convert_rows: output size");
    kernel(src.data.data() + static_cast<size_t>(row_begin * cols) * ssize, out.data(), n);
    return;
  }
  // Source matrices [rows, cols]; output row R is column R % cols of matrix R / cols.
  const int64_t rows = src.shape[rank - 2], cols = src.shape[rank - 1];
  MOBIUS_ASSERT(out.size() == static_cast<size_t>((row_end - row_begin) * rows) * dsize,
                "convert_rows: output size");
  alignas(64) uint8_t tile[kTile * kTile * 8];
  for (int64_t R = row_begin; R < row_end;) {
    const int64_t m = R / cols, c0 = R % cols, c1 = std::min(cols, c0 + (row_end - R));
    const uint8_t* matrix = src.data.data() + static_cast<size_t>(m * rows * cols) * ssize;
    uint8_t* dst_rows = out.data() + static_cast<size_t>((R - row_begin) * rows) * dsize;
    for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
      const int64_t th = std::min(kTile, rows - r0);
      for (int64_t tc = c0; tc < c1; tc += kTile) {
        const int64_t tw = std::min(kTile, c1 - tc);
        for (int64_t r = 0; r < th; ++r)
          kernel(matrix + static_cast<size_t>((r0 + r) * cols + tc) * ssize,
                 tile + static_cast<size_t>(r * kTile) * dsize, static_cast<size_t>(tw));
        untile(dsize, tile, th, tw, dst_rows + static_cast<size_t>((tc - c0) * rows + r0) * dsize, rows);
      }
    }
    R += c1 - c0;
  }
}

void convert_tensor(const TensorView& src, DataType dst, bool transpose, std::span<uint8_t> out,
                    Isa isa) {
  convert_rows(src, dst, transpose, 0, output_rows(src.shape, transpose), out, isa);
}

}  // namespace mobius
