// IEEE binary16 and bfloat16 conversions, round-to-nearest-even, Inf preserved, NaN kept as a
// quiet NaN of the same sign (payload truncated when narrowing); bf16_to_f32 is the exact widening
// (IEEE 754-2008; bfloat16 as the upper half of binary32).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace mobius {

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float bf16_to_f32(uint16_t h) { return bits_f32(static_cast<uint32_t>(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  // Inf; NaN quieted with its payload kept, as IEEE 754 conversions and F16C's vcvtph2ps do.
  if (exp == 0x1f) return bits_f32(sign | 0x7f800000u | (mant ? 0x400000u : 0u) | (mant << 13));
  if (exp == 0) {
    if (mant == 0) return bits_f32(sign);
    // subnormal: value = mant * 2^-24
    float v = static_cast<float>(mant) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

inline uint16_t f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u | static_cast<uint16_t>((abs >> 13) & 0x3ffu);  // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to Inf (>= 65520) or is Inf
  if (abs < 0x38800000u) {                         // result is subnormal or zero
    if (abs < 0x33000000u) return sign;            // < 2^-25 rounds to 0
    uint32_t exp = abs >> 23;
    uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - exp;  // 14..24 (value = mant * 2^(exp-150); f16 unit 2^-24)
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return sign | static_cast<uint16_t>(q);
  }
  uint32_t r = abs - 0x38000000u;  // rebias exponent 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return sign | static_cast<uint16_t>(r >> 13);
}

// float64 -> binary16 / bfloat16 rounded once to nearest-even. Narrowing to float32 first would
// round twice (1 + 2^-11 + 2^-40 becomes the tie 1 + 2^-11, then 1.0 instead of 1 + 2^-10), so
// the float32 step rounds to odd: with float32's 13 (resp. 16) extra significand bits the second
// rounding is then correct (Boldo & Melquiond, "When double rounding is odd", 2005).
inline float f64_to_f32_round_to_odd(double d) {
  const float f = static_cast<float>(d);
  if (std::isnan(d) || std::isinf(f) || static_cast<double>(f) == d || (f32_bits(f) & 1u)) return f;
  return std::nextafter(f, static_cast<double>(f) > d ? -INFINITY : INFINITY);
}
inline uint16_t f64_to_f16(double d) { return f32_to_f16(f64_to_f32_round_to_odd(d)); }
inline uint16_t f64_to_bf16(double d) { return f32_to_bf16(f64_to_f32_round_to_odd(d)); }

}  // namespace mobius
