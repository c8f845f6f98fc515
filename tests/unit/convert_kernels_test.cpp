// weights/convert_kernels.h: every kernel, on every instruction set this CPU has, bit-exact
// against the scalar definitions of util/float16.h (themselves checked against the IEEE 754
// definitions in util_float16_test.cpp): all 65536 16-bit patterns, and for float32 sources every
// bfloat16 and binary16 rounding decision plus a sweep over the 2^32 patterns.
#include "weights/convert_kernels.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "test_util.h"
#include "util/float16.h"

namespace mobius {
namespace {

std::vector<Isa> isas() {
  std::vector<Isa> out{Isa::kScalar};
  if (best_isa() == Isa::kAvx2F16c) out.push_back(Isa::kAvx2F16c);
  return out;
}

const char* isa_name(Isa isa) { return isa == Isa::kScalar ? "scalar" : "avx2+f16c"; }

template <typename Dst, typename Src>
std::vector<Dst> run(DataType src, DataType dst, Isa isa, const std::vector<Src>& in) {
  ConvertFn fn = convert_kernel(src, dst, isa);
  EXPECT_NE(fn, nullptr);
  std::vector<Dst> out(in.size());
  if (fn) fn(reinterpret_cast<const uint8_t*>(in.data()), reinterpret_cast<uint8_t*>(out.data()), in.size());
  return out;
}

std::vector<uint16_t> all_16bit() {
  std::vector<uint16_t> v(65536);
  for (uint32_t i = 0; i < 65536; ++i) v[i] = static_cast<uint16_t>(i);
  return v;
}

// float32 bit patterns around every rounding decision of both 16-bit formats: each upper half
// with low halves 0, 1, below / at / above the bf16 tie, 0xffff; each f16 value, the midpoint to
// its neighbour (the tie) and the floats either side, with both signs; a sweep over all 2^32
// patterns (stride 257) covering every exponent, NaN payloads and infinities.
std::vector<uint32_t> f32_patterns() {
  std::vector<uint32_t> v;
  for (uint32_t hi = 0; hi <= 0xffff; ++hi)
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) v.push_back(hi << 16 | lo);
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const uint32_t a = f32_bits(f16_to_f32(static_cast<uint16_t>(h)));
    const float next = h == 0x7bff ? 65536.0f : f16_to_f32(static_cast<uint16_t>(h + 1));
    const uint32_t mid = f32_bits((bits_f32(a) + next) / 2);  // exact in float32
    for (uint32_t u : {a, mid - 1, mid, mid + 1}) {
      v.push_back(u);
      v.push_back(u | 0x80000000u);
    }
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 257) v.push_back(static_cast<uint32_t>(u));
  return v;
}

template <typename T>
void expect_bits_equal(const std::vector<T>& got, const std::vector<T>& want, const char* what, Isa isa,
                       const std::vector<uint32_t>& in) {
  ASSERT_EQ(got.size(), want.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && ++mismatches <= 5)
      ADD_FAILURE() << what << " [" << isa_name(isa) << "] input 0x" << std::hex << in[i] << ": got 0x"
                    << +got[i] << ", want 0x" << +want[i];
  EXPECT_EQ(mismatches, 0u) << what << " [" << isa_name(isa) << "]";
}

TEST(ConvertKernels, SixteenBitSourcesExhaustive) {
  const std::vector<uint16_t> h = all_16bit();
  const std::vector<uint32_t> in(h.begin(), h.end());
  std::vector<uint32_t> f16_f32(h.size()), bf16_f32(h.size());
  std::vector<uint16_t> bf16_f16(h.size()), f16_bf16(h.size());
  for (size_t i = 0; i < h.size(); ++i) {
    f16_f32[i] = f32_bits(f16_to_f32(h[i]));
    bf16_f32[i] = f32_bits(bf16_to_f32(h[i]));
    bf16_f16[i] = f32_to_f16(bf16_to_f32(h[i]));
    f16_bf16[i] = f32_to_bf16(f16_to_f32(h[i]));
  }
  for (Isa isa : isas()) {
    expect_bits_equal(run<uint32_t>(DataType::FLOAT16, DataType::FLOAT, isa, h), f16_f32, "f16->f32", isa, in);
    expect_bits_equal(run<uint32_t>(DataType::BFLOAT16, DataType::FLOAT, isa, h), bf16_f32, "bf16->f32", isa, in);
    expect_bits_equal(run<uint16_t>(DataType::BFLOAT16, DataType::FLOAT16, isa, h), bf16_f16, "bf16->f16", isa, in);
    expect_bits_equal(run<uint16_t>(DataType::FLOAT16, DataType::BFLOAT16, isa, h), f16_bf16, "f16->bf16", isa, in);
  }
}

TEST(ConvertKernels, F32SourcesAtEveryRoundingDecision) {
  const std::vector<uint32_t> in = f32_patterns();
  std::vector<uint16_t> f16(in.size()), bf16(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    f16[i] = f32_to_f16(bits_f32(in[i]));
    bf16[i] = f32_to_bf16(bits_f32(in[i]));
  }
  for (Isa isa : isas()) {
    expect_bits_equal(run<uint16_t>(DataType::FLOAT, DataType::FLOAT16, isa, in), f16, "f32->f16", isa, in);
    expect_bits_equal(run<uint16_t>(DataType::FLOAT, DataType::BFLOAT16, isa, in), bf16, "f32->bf16", isa, in);
  }
}

// The special values, spelled out: ties to even, subnormals, signed zeros, infinities, overflow,
// NaN (stays NaN, quiet, sign kept).
TEST(ConvertKernels, SpecialValues) {
  struct Case {
    uint32_t f32;
    uint16_t f16, bf16;
  };
  const std::vector<Case> cases = {
      {0x00000000u, 0x0000, 0x0000},  // +0
      {0x80000000u, 0x8000, 0x8000},  // -0
      {0x7f800000u, 0x7c00, 0x7f80},  // +Inf
      {0xff800000u, 0xfc00, 0xff80},  // -Inf
      {0x7fc00000u, 0x7e00, 0x7fc0},  // quiet NaN
      {0xff800001u, 0xfe00, 0xffc0},  // signalling NaN, negative: quieted, sign kept
      {0x7fa00000u, 0x7f00, 0x7fe0},  // NaN payload: its top bits kept
      {0x3f801000u, 0x3c00, 0x3f80},  // 1 + 2^-11: f16 tie to even (down)
      {0x3f803000u, 0x3c02, 0x3f80},  // 1 + 3 * 2^-11: f16 tie to even (up)
      {0x3f808000u, 0x3c04, 0x3f80},  // 1 + 2^-8: bf16 tie to even (down)
      {0x3f818000u, 0x3c0c, 0x3f82},  // 1 + 3 * 2^-8: bf16 tie to even (up)
      {0x477fefffu, 0x7bff, 0x4780},  // just below 65520: 65504
      {0x477ff000u, 0x7c00, 0x4780},  // 65520: overflows to Inf
      {0x7f7fffffu, 0x7c00, 0x7f80},  // largest float: Inf in both
      {0x33000000u, 0x0000, 0x3300},  // 2^-25: tie between 0 and the least f16 subnormal -> 0
      {0x33000001u, 0x0001, 0x3300},  // just above: least subnormal
      {0x33c00000u, 0x0002, 0x33c0},  // 1.5 * 2^-24: tie -> 2 * 2^-24 (even)
      {0x387fe000u, 0x0400, 0x3880},  // just below the least f16 normal: rounds up to it
      {0x00000001u, 0x0000, 0x0000},  // least float subnormal
      {0x807fffffu, 0x8000, 0x8080},  // largest negative float subnormal
  };
  std::vector<uint32_t> in;
  for (const Case& c : cases) in.push_back(c.f32);
  for (Isa isa : isas()) {
    const auto f16 = run<uint16_t>(DataType::FLOAT, DataType::FLOAT16, isa, in);
    const auto bf16 = run<uint16_t>(DataType::FLOAT, DataType::BFLOAT16, isa, in);
    for (size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ(f16[i], cases[i].f16) << isa_name(isa) << " f32->f16 0x" << std::hex << cases[i].f32;
      EXPECT_EQ(bf16[i], cases[i].bf16) << isa_name(isa) << " f32->bf16 0x" << std::hex << cases[i].f32;
    }
    // Widening: NaN stays NaN with its sign; f16 signalling NaN is quieted, bf16 is exact.
    const std::vector<uint16_t> nan{0x7c01, 0xfc01, 0x7e00, 0x0001, 0x8000, 0xfc00};
    EXPECT_EQ(run<uint32_t>(DataType::FLOAT16, DataType::FLOAT, isa, nan),
              (std::vector<uint32_t>{0x7fc02000u, 0xffc02000u, 0x7fc00000u, 0x33800000u, 0x80000000u, 0xff800000u}))
        << isa_name(isa);
    EXPECT_EQ(run<uint32_t>(DataType::BFLOAT16, DataType::FLOAT, isa, nan),
              (std::vector<uint32_t>{0x7c010000u, 0xfc010000u, 0x7e000000u, 0x00010000u, 0x80000000u, 0xfc000000u}))
        << isa_name(isa);
  }
}

// Runs of every length 0..70 from an odd address: the vector loop, its tail and unaligned access.
TEST(ConvertKernels, EveryLengthAndAlignment) {
  const std::vector<float> x = test::iota_f32(72, -7.3f, 0.377f);
  std::vector<uint8_t> src(1 + x.size() * 4);
  std::memcpy(src.data() + 1, x.data(), x.size() * 4);
  for (Isa isa : isas()) {
    for (DataType dst : {DataType::FLOAT16, DataType::BFLOAT16}) {
      ConvertFn fn = convert_kernel(DataType::FLOAT, dst, isa);
      for (size_t n = 0; n <= 70; ++n) {
        std::vector<uint8_t> out(1 + 2 * n + 2, 0xab);
        fn(src.data() + 1, out.data() + 1, n);
        for (size_t i = 0; i < n; ++i) {
          uint16_t got;
          std::memcpy(&got, out.data() + 1 + 2 * i, 2);
          EXPECT_EQ(got, dst == DataType::FLOAT16 ? f32_to_f16(x[i]) : f32_to_bf16(x[i])) << n << " " << i;
        }
        EXPECT_EQ(out[0], 0xab);  // nothing written outside the run
        EXPECT_EQ(out[1 + 2 * n], 0xab);
      }
    }
  }
}

TEST(ConvertKernels, UnsupportedPairsHaveNoKernel) {
  for (Isa isa : isas()) {
    EXPECT_EQ(convert_kernel(DataType::INT64, DataType::FLOAT, isa), nullptr);
    EXPECT_EQ(convert_kernel(DataType::FLOAT, DataType::DOUBLE, isa), nullptr);
    EXPECT_NE(convert_kernel(DataType::INT64, DataType::INT64, isa), nullptr);
    EXPECT_NE(convert_kernel(DataType::DOUBLE, DataType::FLOAT16, isa), nullptr);
  }
}

}  // namespace
}  // namespace mobius
