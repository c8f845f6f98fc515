// util/float16.h against the IEEE 754-2008 definitions: decoding from the bit-level definition
// of binary16 / bfloat16, encoding against an independent round-to-nearest-even reference
// (test_util.h round_to_format) and, where the compiler has it, the _Float16 conversions.
#include "util/float16.h"

#include <cmath>
#include <limits>

#include "test_util.h"

namespace mobius {
namespace {

using test::round_bf16;
using test::round_f16;

// Value of a binary16 bit pattern by the definition: (-1)^s * 2^(e-15) * 1.m, subnormal
// 2^-14 * 0.m, e = 31 Inf / NaN.
double decode_f16(uint16_t h) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

// Value of a bfloat16 bit pattern: 8 exponent bits (bias 127), 7 mantissa bits.
double decode_bf16(uint16_t h) {
  const int e = (h >> 7) & 0xff, m = h & 0x7f;
  double v = e == 255 ? (m ? NAN : INFINITY) : e == 0 ? std::ldexp(m, -133) : std::ldexp(128 + m, e - 134);
  return (h & 0x8000) ? -v : v;
}

bool is_f16_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
bool is_bf16_nan(uint16_t h) { return (h & 0x7f80) == 0x7f80 && (h & 0x7f); }

// got equals want exactly, including the sign of zero; NaN matches NaN.
::testing::AssertionResult same(float got, double want) {
  if (std::isnan(want) ? std::isnan(got)
                       : got == want && std::signbit(got) == std::signbit(want))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << " (0x" << std::hex << f32_bits(got)
                                       << "), want " << want;
}

// Every float the encoders must get right: the f16 values themselves, the exact midpoints between
// neighbours (ties) and the floats just below and above each midpoint, with both signs. Above the
// largest finite value (65504) the next step would be 65536, so its midpoint 65520 is the
// overflow threshold.
std::vector<float> f16_boundaries() {
  std::vector<float> out;
  for (uint16_t h = 0; h <= 0x7bff; ++h) {
    const double a = decode_f16(h);
    const double b = h == 0x7bff ? 65536.0 : decode_f16(h + 1);
    const float mid = static_cast<float>((a + b) / 2);
    EXPECT_EQ(mid, (a + b) / 2) << "midpoint not exact";
    for (float x : {static_cast<float>(a), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      out.push_back(x);
      out.push_back(-x);
    }
  }
  return out;
}

// A sparse sweep over all 2^32 float bit patterns (every exponent, NaNs and infinities included).
template <typename Fn>
void for_float_sweep(Fn&& fn) {
  for (uint64_t u = 0; u <= 0xffffffffu; u += 7919) fn(bits_f32(static_cast<uint32_t>(u)));
  for (uint32_t u : {0x7f800000u, 0xff800000u, 0x7f800001u, 0x7fc00000u, 0xffffffffu, 0x7f7fffffu})
    fn(bits_f32(u));
}

TEST(Float16, F16ToF32ExactForAll65536Patterns) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    EXPECT_TRUE(same(f16_to_f32(static_cast<uint16_t>(h)), decode_f16(static_cast<uint16_t>(h)))) << h;
#ifdef __FLT16_MAX__
    _Float16 c;
    uint16_t bits = static_cast<uint16_t>(h);
    std::memcpy(&c, &bits, 2);
    EXPECT_TRUE(same(f16_to_f32(bits), static_cast<double>(c))) << h;
#endif
  }
}

TEST(Float16, F32ToF16RoundTripsEveryPatternAndKeepsNaN) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t back = f32_to_f16(f16_to_f32(static_cast<uint16_t>(h)));
    if (is_f16_nan(static_cast<uint16_t>(h))) {
      EXPECT_TRUE(is_f16_nan(back)) << h;
      EXPECT_EQ(back & 0x8000, h & 0x8000) << h;
    } else {
      EXPECT_EQ(back, h);
    }
  }
}

TEST(Float16, F32ToF16RoundsToNearestEvenAtEveryTie) {
  int ties_to_upper = 0;
  for (float x : f16_boundaries()) {
    const uint16_t h = f32_to_f16(x);
    EXPECT_TRUE(same(f16_to_f32(h), round_f16(x))) << "x = " << x;
#ifdef __FLT16_MAX__
    EXPECT_TRUE(same(f16_to_f32(h), static_cast<double>(static_cast<_Float16>(x)))) << "x = " << x;
#endif
    ties_to_upper += std::fabs(f16_to_f32(h)) > std::fabs(x);
  }
  EXPECT_GT(ties_to_upper, 0);  // the set exercises rounding both ways
}

TEST(Float16, F32ToF16OverflowUnderflowAndNaN) {
  const float max = static_cast<float>(decode_f16(0x7bff));  // 65504
  const float overflow = static_cast<float>((decode_f16(0x7bff) + 65536.0) / 2);
  EXPECT_TRUE(same(f16_to_f32(f32_to_f16(std::nextafter(overflow, 0.0f))), max));
  EXPECT_TRUE(std::isinf(f16_to_f32(f32_to_f16(overflow))));  // tie to even: 65536 = Inf
  EXPECT_TRUE(same(f16_to_f32(f32_to_f16(-std::numeric_limits<float>::max())), -INFINITY));
  const float tiny = static_cast<float>(decode_f16(0x0001)) / 2;  // half the smallest subnormal
  EXPECT_TRUE(same(f16_to_f32(f32_to_f16(tiny)), 0.0));
  EXPECT_TRUE(same(f16_to_f32(f32_to_f16(-tiny)), -0.0));
  EXPECT_TRUE(same(f16_to_f32(f32_to_f16(std::nextafter(tiny, 1.0f))), decode_f16(0x0001)));
  for_float_sweep([](float x) {
    const uint16_t h = f32_to_f16(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(is_f16_nan(h)) << std::hex << f32_bits(x);
      EXPECT_EQ(std::signbit(x), (h & 0x8000) != 0);
    } else {
      EXPECT_TRUE(same(f16_to_f32(h), round_f16(x))) << std::hex << f32_bits(x);
    }
  });
}

// float64 inputs a relative 2^-40 either side of every f16 / bf16 decision point round once.
TEST(Float16, F64ToF16AndBf16RoundOnceNearEveryTie) {
  const double eps = std::ldexp(1.0, -40);
  for (float x : f16_boundaries())
    for (double d : {static_cast<double>(x), x * (1 + eps), x * (1 - eps)})
      EXPECT_TRUE(same(f16_to_f32(f64_to_f16(d)), round_f16(d))) << d;
  for (uint32_t hi = 0; hi <= 0xffff; ++hi) {
    const float x = bits_f32(hi << 16 | 0x8000u);  // a bf16 tie (or a NaN)
    for (double d : {static_cast<double>(x), x * (1 + eps), x * (1 - eps)}) {
      if (std::isnan(d)) {
        EXPECT_TRUE(is_bf16_nan(f64_to_bf16(d)));
      } else {
        EXPECT_TRUE(same(bf16_to_f32(f64_to_bf16(d)), round_bf16(d))) << d;
      }
    }
  }
  EXPECT_TRUE(is_f16_nan(f64_to_f16(NAN)));
  EXPECT_TRUE(same(f16_to_f32(f64_to_f16(1e300)), INFINITY));
  EXPECT_TRUE(same(f16_to_f32(f64_to_f16(-1e-300)), -0.0));
}

TEST(Float16, Bf16ToF32ExactForAll65536Patterns) {
  for (uint32_t h = 0; h <= 0xffff; ++h)
    EXPECT_TRUE(same(bf16_to_f32(static_cast<uint16_t>(h)), decode_bf16(static_cast<uint16_t>(h)))) << h;
}

// bfloat16 keeps the upper 16 bits of a float, so the low 16 bits decide the rounding: every
// upper half with the low halves 0, 1, just below / at / just above the tie 0x8000, and 0xffff.
TEST(Float16, F32ToBf16RoundsToNearestEvenForEveryUpperHalf) {
  int ties = 0;
  for (uint32_t hi = 0; hi <= 0xffff; ++hi) {
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      const float x = bits_f32(hi << 16 | lo);
      const uint16_t b = f32_to_bf16(x);
      if (std::isnan(x)) {
        EXPECT_TRUE(is_bf16_nan(b)) << std::hex << f32_bits(x);
        EXPECT_EQ(hi & 0x8000, b & 0x8000u);
        continue;
      }
      EXPECT_TRUE(same(bf16_to_f32(b), round_bf16(x))) << std::hex << f32_bits(x);
      ties += lo == 0x8000;
    }
  }
  EXPECT_GT(ties, 60000);
  EXPECT_TRUE(std::isinf(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::max()))));
}

TEST(Float16, F32ToBf16Sweep) {
  for_float_sweep([](float x) {
    const uint16_t b = f32_to_bf16(x);
    if (std::isnan(x)) {
      EXPECT_TRUE(is_bf16_nan(b)) << std::hex << f32_bits(x);
    } else {
      EXPECT_TRUE(same(bf16_to_f32(b), round_bf16(x))) << std::hex << f32_bits(x);
    }
  });
}

}  // namespace
}  // namespace mobius
