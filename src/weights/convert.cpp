#include "weights/convert.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "util/error.h"

#ifdef __SSE2__
#include <immintrin.h>
#endif

namespace mobius {
namespace {

// Transposes work in blocks of kBlockRows source rows x kBlockCols source columns.
constexpr int64_t kBlockRows = 128, kBlockCols = 256;

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Copies a converted tile (tile[r][c], th x tw elements, row stride ld) transposed into `out`
// (element (r, c) at out[c * stride + r]).
template <size_t Size>
void untile_scalar(const uint8_t* tile, int64_t ld, int64_t r0, int64_t th, int64_t c0, int64_t tw,
                   uint8_t* out, int64_t stride) {
  for (int64_t c = c0; c < tw; ++c)
    for (int64_t r = r0; r < th; ++r)
      std::memcpy(out + (c * stride + r) * Size, tile + (r * ld + c) * Size, Size);
}

#ifdef __SSE2__
// 8 x 8 blocks of 16-bit elements: three rounds of interleaves (SSE2, baseline on x86-64).
void untile_2(const uint8_t* tile, int64_t ld, int64_t th, int64_t tw, uint8_t* out, int64_t stride) {
  const int64_t bh = th / 8 * 8, bw = tw / 8 * 8;
  for (int64_t r = 0; r < bh; r += 8)
    for (int64_t c = 0; c < bw; c += 8) {
      __m128i x[8], y[8];
      for (int i = 0; i < 8; ++i)
        x[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(tile + ((r + i) * ld + c) * 2));
      for (int i = 0; i < 4; ++i) {
        y[2 * i] = _mm_unpacklo_epi16(x[2 * i], x[2 * i + 1]);
        y[2 * i + 1] = _mm_unpackhi_epi16(x[2 * i], x[2 * i + 1]);
      }
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          x[4 * i + 2 * j] = _mm_unpacklo_epi32(y[4 * i + j], y[4 * i + j + 2]);
          x[4 * i + 2 * j + 1] = _mm_unpackhi_epi32(y[4 * i + j], y[4 * i + j + 2]);
        }
      for (int i = 0; i < 4; ++i) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + ((c + 2 * i) * stride + r) * 2),
                         _mm_unpacklo_epi64(x[i], x[i + 4]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + ((c + 2 * i + 1) * stride + r) * 2),
                         _mm_unpackhi_epi64(x[i], x[i + 4]));
      }
    }
  untile_scalar<2>(tile, ld, bh, th, 0, tw, out, stride);
  untile_scalar<2>(tile, ld, 0, bh, bw, tw, out, stride);
}

// 4 x 4 blocks of 32-bit elements (_MM_TRANSPOSE4_PS).
void untile_4(const uint8_t* tile, int64_t ld, int64_t th, int64_t tw, uint8_t* out, int64_t stride) {
  const int64_t bh = th / 4 * 4, bw = tw / 4 * 4;
  for (int64_t r = 0; r < bh; r += 4)
    for (int64_t c = 0; c < bw; c += 4) {
      auto row = [&](int64_t i) { return _mm_loadu_ps(reinterpret_cast<const float*>(tile + ((r + i) * ld + c) * 4)); };
      __m128 a = row(0), b = row(1), d = row(2), e = row(3);
      _MM_TRANSPOSE4_PS(a, b, d, e);
      float* o = reinterpret_cast<float*>(out + (c * stride + r) * 4);
      _mm_storeu_ps(o, a);
      _mm_storeu_ps(o + stride, b);
      _mm_storeu_ps(o + 2 * stride, d);
      _mm_storeu_ps(o + 3 * stride, e);
    }
  untile_scalar<4>(tile, ld, bh, th, 0, tw, out, stride);
  untile_scalar<4>(tile, ld, 0, bh, bw, tw, out, stride);
}
#else
void untile_2(const uint8_t* tile, int64_t ld, int64_t th, int64_t tw, uint8_t* out, int64_t stride) {
  untile_scalar<2>(tile, ld, 0, th, 0, tw, out, stride);
}
void untile_4(const uint8_t* tile, int64_t ld, int64_t th, int64_t tw, uint8_t* out, int64_t stride) {
  untile_scalar<4>(tile, ld, 0, th, 0, tw, out, stride);
}
#endif

void untile(size_t size, const uint8_t* tile, int64_t ld, int64_t th, int64_t tw, uint8_t* out, int64_t stride) {
  switch (size) {
    case 1: return untile_scalar<1>(tile, ld, 0, th, 0, tw, out, stride);
    case 2: return untile_2(tile, ld, th, tw, out, stride);
    case 4: return untile_4(tile, ld, th, tw, out, stride);
    default: return untile_scalar<8>(tile, ld, 0, th, 0, tw, out, stride);
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
  // Source matrices [rows, cols]; output row R is column R % cols of matrix R / cols. Blocks of
  // kBlockRows source rows x kBlockCols columns are transposed in the source dtype into `block`
  // (reading kBlockRows source rows sequentially), then each block row, a run of kBlockRows
  // elements of one output row, is converted straight into the output.
  const int64_t rows = src.shape[rank - 2], cols = src.shape[rank - 1];
  MOBIUS_ASSERT(out.size() == static_cast<size_t>((row_end - row_begin) * rows) * dsize,
                "convert_rows: output size");
  std::vector<uint8_t> block(static_cast<size_t>(kBlockCols * kBlockRows) * ssize);
  for (int64_t R = row_begin; R < row_end;) {
    const int64_t m = R / cols, c0 = R % cols, c1 = std::min(cols, c0 + (row_end - R));
    const uint8_t* matrix = src.data.data() + static_cast<size_t>(m * rows * cols) * ssize;
    uint8_t* dst_rows = out.data() + static_cast<size_t>((R - row_begin) * rows) * dsize;
    for (int64_t p0 = c0; p0 < c1; p0 += kBlockCols) {
      const int64_t pw = std::min(kBlockCols, c1 - p0);
      for (int64_t r0 = 0; r0 < rows; r0 += kBlockRows) {
        const int64_t th = std::min(kBlockRows, rows - r0);
        untile(ssize, matrix + static_cast<size_t>(r0 * cols + p0) * ssize, cols, th, pw, block.data(),
               kBlockRows);
        for (int64_t c = 0; c < pw; ++c)
          kernel(block.data() + static_cast<size_t>(c * kBlockRows) * ssize,
                 dst_rows + static_cast<size_t>((p0 - c0 + c) * rows + r0) * dsize, static_cast<size_t>(th));
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
