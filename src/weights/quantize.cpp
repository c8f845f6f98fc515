// Compiled with -ffp-contract=off (CMakeLists.txt): w * r + zp must round twice, as in MLAS.
#include "weights/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "util/error.h"
#include "util/float16.h"
#include "weights/convert_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MOBIUS_X86_QUANT 1
#include <immintrin.h>
#endif

namespace mobius {

int64_t quant_k_blocks(int64_t k, const BlockQuantization& q) { return (k + q.block_size - 1) / q.block_size; }

int64_t quant_blob_size(const BlockQuantization& q) { return q.block_size * q.bits / 8; }

int64_t quant_zero_point_bytes(int64_t k, const BlockQuantization& q) {
  return (quant_k_blocks(k, q) * q.bits + 7) / 8;
}

Shape quant_shape(BlockQuantize::Part part, int64_t n, int64_t k, const BlockQuantization& q) {
  switch (part) {
    case BlockQuantize::Part::data: return {n, quant_k_blocks(k, q), quant_blob_size(q)};
    case BlockQuantize::Part::scales: return {n, quant_k_blocks(k, q)};
    case BlockQuantize::Part::zero_points: return {n, quant_zero_point_bytes(k, q)};
  }
  return {};
}

namespace {

// Stores `s` as the scale dtype at `out[i]`; returns the stored value as float.
float store_scale(float s, DataType dt, uint8_t* out, int64_t i) {
  if (dt == DataType::FLOAT16) {
    const uint16_t h = f32_to_f16(s);
    if (out) std::memcpy(out + i * 2, &h, 2);
    return f16_to_f32(h);
  }
  if (out) std::memcpy(out + i * 4, &s, 4);
  return s;
}

// std::clamp(std::roundf(v), 0, max) (rounding half away from zero, as MLAS does) without a libm
// call or a branch per element: v is clamped first (the same result for every non-NaN v; NaN
// gives 0), then rounded up from its truncation when the fraction, exact below 2^23, is >= 0.5.
// Checked against the roundf form for every float of magnitude <= 300 and a sample beyond, with
// max 15 and 255; a Llama-3.2-1B int4 build went from 11.5 to 6.2-7.3 s of user time.
uint8_t round_code(float v, float max) {
  v = v > 0.0f ? v : 0.0f;
  v = v < max ? v : max;
  const int t = static_cast<int>(v);
  return static_cast<uint8_t>(t + (v - static_cast<float>(t) >= 0.5f));
}

// The smallest and largest of x[0, n), NaN skipped (as std::min / std::max in this order do).
struct Range {
  float lo, hi;
};
Range block_range(const float* x, int64_t n) {
  float lo = std::numeric_limits<float>::max(), hi = -lo;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  return {lo, hi};
}

// codes[i] = round_code(x[i] * recip + zp, max) for i in [0, n).
void block_codes(const float* x, int64_t n, float recip, float zp, float max, uint8_t* codes) {
  for (int64_t i = 0; i < n; ++i) codes[i] = round_code(x[i] * recip + zp, max);
}

#ifdef MOBIUS_X86_QUANT
#define MOBIUS_QUANT_AVX2 __attribute__((target("avx2")))
// block_range for n a multiple of 8. vminps / vmaxps return their second operand when either is
// NaN, so x NaN keeps the running value, as the scalar form; the lanes' order differs from it only
// between equal values, which picks between +0 and -0 (a block of zeros: the caller's fallback).
MOBIUS_QUANT_AVX2 Range block_range_avx2(const float* x, int64_t n) {
  __m256 lo = _mm256_set1_ps(std::numeric_limits<float>::max()), hi = _mm256_set1_ps(-std::numeric_limits<float>::max());
  for (int64_t i = 0; i < n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    lo = _mm256_min_ps(v, lo);
    hi = _mm256_max_ps(v, hi);
  }
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, lo);
  _mm256_store_ps(h, hi);
  Range r{l[0], h[0]};
  for (int i = 1; i < 8; ++i) r = {std::min(r.lo, l[i]), std::max(r.hi, h[i])};
  return r;
}

// block_codes for n a multiple of 32, the same arithmetic: a product and a sum each rounded
// (-ffp-contract=off), max(v, 0) (NaN -> 0, as vmaxps returns its second operand), min(v, max),
// truncation plus one where the fraction is >= 0.5.
MOBIUS_QUANT_AVX2 void block_codes_avx2(const float* x, int64_t n, float recip, float zp, float max, uint8_t* codes) {
  const __m256 r = _mm256_set1_ps(recip), z = _mm256_set1_ps(zp), m = _mm256_set1_ps(max), zero = _mm256_setzero_ps(),
               half = _mm256_set1_ps(0.5f);
  auto code = [&](const float* p) MOBIUS_QUANT_AVX2 {
    __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(p), r), z);
    v = _mm256_min_ps(_mm256_max_ps(v, zero), m);
    const __m256i t = _mm256_cvttps_epi32(v);
    const __m256 up = _mm256_cmp_ps(_mm256_sub_ps(v, _mm256_cvtepi32_ps(t)), half, _CMP_GE_OQ);
    return _mm256_sub_epi32(t, _mm256_castps_si256(up));  // up is -1 where set
  };
  for (int64_t i = 0; i < n; i += 32) {
    // 32 codes (0..255) to bytes in order: the packs interleave the 128-bit lanes, the permute
    // puts their 4-byte groups back
    const __m256i a = _mm256_packs_epi32(code(x + i), code(x + i + 8));
    const __m256i b = _mm256_packs_epi32(code(x + i + 16), code(x + i + 24));
    const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(a, b), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), bytes);
  }
}
#endif

}  // namespace

void block_quantize_rows(const float* src, int64_t rows, int64_t k, const BlockQuantization& q,
                         DataType scale_dtype, uint8_t* data, uint8_t* scales, uint8_t* zero_points, Isa isa) {
  MOBIUS_ASSERT(q.bits == 4 || q.bits == 8, "block quantization: bits must be 4 or 8");
  MOBIUS_ASSERT(scale_dtype == DataType::FLOAT || scale_dtype == DataType::FLOAT16,
                "block quantization: scales must be float or float16");
  MOBIUS_ASSERT(!(q.symmetric && zero_points), "block quantization: symmetric has no zero points");
  const int64_t kb = quant_k_blocks(k, q), blob = quant_blob_size(q), zp_bytes = quant_zero_point_bytes(k, q);
  const int max_q = (1 << q.bits) - 1, mid = 1 << (q.bits - 1);
  const float max_qf = static_cast<float>(max_q);
  std::vector<uint8_t> codes(static_cast<size_t>(q.block_size));
  // the AVX2 forms (bit-identical) for blocks of a multiple of 32 values, where the CPU has AVX2
#ifdef MOBIUS_X86_QUANT
  const bool avx2 = isa == Isa::kAvx2F16c;
  auto range_avx2 = block_range_avx2;
  auto codes_avx2 = block_codes_avx2;
#else
  const bool avx2 = false;
  auto range_avx2 = block_range;
  auto codes_avx2 = block_codes;
#endif
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = src + r * k;
    if (zero_points) {  // an unused trailing half byte holds 2^(bits-1), as onnxruntime writes it
      std::memset(zero_points + r * zp_bytes, 0, static_cast<size_t>(zp_bytes));
      if (q.bits == 4 && kb % 2) zero_points[r * zp_bytes + zp_bytes - 1] = static_cast<uint8_t>(mid << 4);
    }
    for (int64_t b = 0; b < kb; ++b) {
      const int64_t begin = b * q.block_size, len = std::min(q.block_size, k - begin);
      const bool vector = avx2 && len % 32 == 0;
      Range range = vector ? range_avx2(row + begin, len) : block_range(row + begin, len);
      if (vector && range.lo == 0.0f && range.hi == 0.0f) range = block_range(row + begin, len);  // zeros' signs
      float lo = range.lo, hi = range.hi;
      float scale;
      int zp = mid;
      if (q.symmetric) {
        const float m = std::fabs(hi) > std::fabs(lo) ? hi : lo;
        scale = store_scale(-m / static_cast<float>(mid), scale_dtype, scales, r * kb + b);
      } else {
        lo = std::min(lo, 0.0f);
        hi = std::max(hi, 0.0f);
        const float s = (hi - lo) / max_qf;
        const float zpf = s != 0.0f ? 0.0f - lo / s : lo;
        // NaN (a block holding -inf and +inf, or NaN bounds) -> 0: the conversion would be undefined
        zp = !(zpf >= 0.0f) ? 0 : zpf > max_qf ? max_q : static_cast<int>(std::roundf(zpf));
        scale = store_scale(s, scale_dtype, scales, r * kb + b);
        if (zero_points) {
          uint8_t& byte = zero_points[r * zp_bytes + (q.bits == 4 ? b / 2 : b)];
          byte |= static_cast<uint8_t>(q.bits == 4 && b % 2 ? zp << 4 : zp);
        }
      }
      if (!data) continue;
      const float recip = scale != 0.0f ? 1.0f / scale : 0.0f;
      const float zpf = static_cast<float>(zp);
      if (vector) codes_avx2(row + begin, len, recip, zpf, max_qf, codes.data());
      else block_codes(row + begin, len, recip, zpf, max_qf, codes.data());
      uint8_t* out = data + (r * kb + b) * blob;
      if (len < q.block_size) std::memset(out, 0, static_cast<size_t>(blob));  // a short last block's padding
      if (q.bits == 8) {
        std::memcpy(out, codes.data(), static_cast<size_t>(len));
      } else {  // element 2j in the low nibble of byte j, 2j + 1 in its high nibble
        for (int64_t j = 0; j < len / 2; ++j) out[j] = static_cast<uint8_t>(codes[2 * j] | codes[2 * j + 1] << 4);
        if (len % 2) out[len / 2] = codes[len - 1];
      }
    }
  }
}

}  // namespace mobius
