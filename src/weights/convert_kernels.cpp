#include "weights/convert_kernels.h"

#include <cstring>

#include "util/float16.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MOBIUS_X86_KERNELS 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace mobius {
namespace {

// ---- scalar ----

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
void scalar_run(const uint8_t* in, uint8_t* out, size_t n) {
  using SrcT = typename Elem<S>::type;
  using DstT = typename Elem<D>::type;
  for (size_t i = 0; i < n; ++i) {
    SrcT s;
    std::memcpy(&s, in + i * sizeof(SrcT), sizeof(SrcT));
    const DstT d = Elem<D>::store(Elem<S>::load(s));
    std::memcpy(out + i * sizeof(DstT), &d, sizeof(DstT));
  }
}

template <size_t Size>
void copy_run(const uint8_t* in, uint8_t* out, size_t n) {
  if (n) std::memcpy(out, in, n * Size);  // a zero-element tensor's buffers may be null
}

template <DataType S>
ConvertFn scalar_from(DataType dst) {
  switch (dst) {
    case DataType::FLOAT: return scalar_run<S, DataType::FLOAT>;
    case DataType::FLOAT16: return scalar_run<S, DataType::FLOAT16>;
    case DataType::BFLOAT16: return scalar_run<S, DataType::BFLOAT16>;
    default: return nullptr;
  }
}

ConvertFn scalar_kernel(DataType src, DataType dst) {
  if (src == dst) {
    switch (dtype_size(src)) {
      case 1: return copy_run<1>;
      case 2: return copy_run<2>;
      case 4: return copy_run<4>;
      case 8: return copy_run<8>;
      default: return nullptr;
    }
  }
  switch (src) {
    case DataType::FLOAT: return scalar_from<DataType::FLOAT>(dst);
    case DataType::DOUBLE: return scalar_from<DataType::DOUBLE>(dst);
    case DataType::FLOAT16: return scalar_from<DataType::FLOAT16>(dst);
    case DataType::BFLOAT16: return scalar_from<DataType::BFLOAT16>(dst);
    default: return nullptr;
  }
}

// ---- AVX2 + F16C ----
#ifdef MOBIUS_X86_KERNELS
#define MOBIUS_AVX2 __attribute__((target("avx2,f16c")))

// 8 lanes of float bits -> 8 bfloat16 in the low 16 bits of each 32-bit lane (f32_to_bf16).
MOBIUS_AVX2 inline __m256i bf16_bits(__m256i u) {
  const __m256i abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

// 16 floats (two vectors of bits) -> 16 bfloat16.
MOBIUS_AVX2 inline void store_bf16x16(uint8_t* out, __m256i lo, __m256i hi) {
  // packus interleaves 128-bit lanes: [lo0-3 hi0-3 lo4-7 hi4-7]; the permute restores order.
  const __m256i packed = _mm256_packus_epi32(bf16_bits(lo), bf16_bits(hi));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute4x64_epi64(packed, 0xd8));
}

MOBIUS_AVX2 inline __m256 load_f16x8(const uint8_t* in) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
}
MOBIUS_AVX2 inline __m256i load_bf16x8_bits(const uint8_t* in) {
  return _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in))), 16);
}
MOBIUS_AVX2 inline void store_f16x8(uint8_t* out, __m256 f) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// Each kernel converts `Step` elements per iteration; Body(in, out) converts one step. The tail
// (n % Step) goes through the same vector code via a zero-padded stack buffer.
template <size_t Step, size_t InSize, size_t OutSize, typename Body>
MOBIUS_AVX2 inline void vector_run(const uint8_t* in, uint8_t* out, size_t n, Body body) {
  size_t i = 0;
  for (; i + Step <= n; i += Step) body(in + i * InSize, out + i * OutSize);
  if (i < n) {
    alignas(32) uint8_t tin[Step * InSize] = {};
    alignas(32) uint8_t tout[Step * OutSize];
    std::memcpy(tin, in + i * InSize, (n - i) * InSize);
    body(tin, tout);
    std::memcpy(out + i * OutSize, tout, (n - i) * OutSize);
  }
}

MOBIUS_AVX2 void avx2_f32_to_f16(const uint8_t* in, uint8_t* out, size_t n) {
  vector_run<8, 4, 2>(in, out, n, [](const uint8_t* s, uint8_t* d) MOBIUS_AVX2 {
    store_f16x8(d, _mm256_loadu_ps(reinterpret_cast<const float*>(s)));
  });
}
MOBIUS_AVX2 void avx2_f16_to_f32(const uint8_t* in, uint8_t* out, size_t n) {
  vector_run<8, 2, 4>(in, out, n, [](const uint8_t* s, uint8_t* d) MOBIUS_AVX2 {
    _mm256_storeu_ps(reinterpret_cast<float*>(d), load_f16x8(s));
  });
}
MOBIUS_AVX2 void avx2_f32_to_bf16(const uint8_t* in, uint8_t* out, size_t n) {
  vector_run<16, 4, 2>(in, out, n, [](const uint8_t* s, uint8_t* d) MOBIUS_AVX2 {
    store_bf16x16(d, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)),
                  _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32)));
  });
}
MOBIUS_AVX2 void avx2_bf16_to_f32(const uint8_t* in, uint8_t* out, size_t n) {
  vector_run<8, 2, 4>(in, out, n, [](const uint8_t* s, uint8_t* d) MOBIUS_AVX2 {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), load_bf16x8_bits(s));
  });
}
MOBIUS_AVX2 void avx2_bf16_to_f16(const uint8_t* in, uint8_t* out, size_t n) {
  vector_run<8, 2, 2>(in, out, n, [](const uint8_t* s, uint8_t* d) MOBIUS_AVX2 {
    store_f16x8(d, _mm256_castsi256_ps(load_bf16x8_bits(s)));
  });
}
MOBIUS_AVX2 void avx2_f16_to_bf16(const uint8_t* in, uint8_t* out, size_t n) {
  vector_run<16, 2, 2>(in, out, n, [](const uint8_t* s, uint8_t* d) MOBIUS_AVX2 {
    store_bf16x16(d, _mm256_castps_si256(load_f16x8(s)), _mm256_castps_si256(load_f16x8(s + 16)));
  });
}

ConvertFn avx2_kernel(DataType src, DataType dst) {
  using D = DataType;
  if (src == D::FLOAT && dst == D::FLOAT16) return avx2_f32_to_f16;
  if (src == D::FLOAT16 && dst == D::FLOAT) return avx2_f16_to_f32;
  if (src == D::FLOAT && dst == D::BFLOAT16) return avx2_f32_to_bf16;
  if (src == D::BFLOAT16 && dst == D::FLOAT) return avx2_bf16_to_f32;
  if (src == D::BFLOAT16 && dst == D::FLOAT16) return avx2_bf16_to_f16;
  if (src == D::FLOAT16 && dst == D::BFLOAT16) return avx2_f16_to_bf16;
  return scalar_kernel(src, dst);
}
#endif

}  // namespace

Isa best_isa() {
#ifdef MOBIUS_X86_KERNELS
  // F16C from CPUID leaf 1 (ECX bit 29): clang 16's __builtin_cpu_supports does not know "f16c".
  static const bool avx2 = __builtin_cpu_supports("avx2") && [] {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }();
  if (avx2) return Isa::kAvx2F16c;
#endif
  return Isa::kScalar;
}

ConvertFn convert_kernel(DataType src, DataType dst, Isa isa) {
  if (src != dst && (!is_float(src) || !is_float(dst) || dst == DataType::DOUBLE)) return nullptr;
  switch (isa) {
    case Isa::kScalar: return scalar_kernel(src, dst);
    case Isa::kAvx2F16c:
#ifdef MOBIUS_X86_KERNELS
      return best_isa() == Isa::kAvx2F16c ? avx2_kernel(src, dst) : nullptr;
#else
      return nullptr;
#endif
  }
  return nullptr;
}

}  // namespace mobius
