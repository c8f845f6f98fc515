// Built with -ffp-contract=off (CMakeLists.txt): `d * q - m` must round twice, as numpy does.
#include "weights/gguf_quants.h"

#include <cstring>

#include "util/error.h"
#include "util/float16.h"

namespace mobius {
namespace {

constexpr int64_t QK_K = 256;

float f16_at(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

// Q4_0: d | 16 bytes of nibbles; element j < 16 is the low nibble of byte j, 16 + j the high one.
void q4_0(const uint8_t* b, float* y) {
  const float d = f16_at(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>((qs[j] & 0x0F) - 8);
    y[j + 16] = d * static_cast<float>((qs[j] >> 4) - 8);
  }
}

// Q4_1: d | m | nibbles as Q4_0; y = d * q + m.
void q4_1(const uint8_t* b, float* y) {
  const float d = f16_at(b), m = f16_at(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(qs[j] & 0x0F) + m;
    y[j + 16] = d * static_cast<float>(qs[j] >> 4) + m;
  }
}

// 5-bit quants: nibbles as Q4_0, bit i of the uint32 qh is the fifth bit of element i.
int q5(const uint8_t* qh_bytes, const uint8_t* qs, int i) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  const int low = i < 16 ? (qs[i] & 0x0F) : (qs[i - 16] >> 4);
  return low | static_cast<int>(((qh >> i) & 1u) << 4);
}

// Q5_0: d | qh | nibbles; y = d * (q - 16).
void q5_0(const uint8_t* b, float* y) {
  const float d = f16_at(b);
  for (int i = 0; i < 32; ++i) y[i] = d * static_cast<float>(q5(b + 2, b + 6, i) - 16);
}

// Q5_1: d | m | qh | nibbles; y = d * q + m.
void q5_1(const uint8_t* b, float* y) {
  const float d = f16_at(b), m = f16_at(b + 2);
  for (int i = 0; i < 32; ++i) y[i] = d * static_cast<float>(q5(b + 4, b + 8, i)) + m;
}

// Q8_0: d | 32 int8; y = q * d.
void q8_0(const uint8_t* b, float* y) {
  const float d = f16_at(b);
  for (int i = 0; i < 32; ++i) y[i] = static_cast<float>(static_cast<int8_t>(b[2 + i])) * d;
}

// The 8 (scale, min) 6-bit pairs of Q4_K / Q5_K packed in 12 bytes (gguf Q4_K.get_scale_min).
void scale_min_k4(const uint8_t* s, uint8_t* sc, uint8_t* mn) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = s[j] & 0x3F;
    mn[j] = s[j + 4] & 0x3F;
    sc[j + 4] = (s[j + 8] & 0x0F) | ((s[j] >> 2) & 0x30);
    mn[j + 4] = (s[j + 8] >> 4) | ((s[j + 4] >> 2) & 0x30);
  }
}

// Q4_K: d | dmin | scales[12] | qs[128]. Sub-block 2k takes the low nibbles of qs[32k..32k+31],
// 2k + 1 the high ones; y = (d * sc) * q - (dmin * m).
void q4_k(const uint8_t* b, float* y) {
  const float d = f16_at(b), dmin = f16_at(b + 2);
  uint8_t sc[8], mn[8];
  scale_min_k4(b + 4, sc, mn);
  const uint8_t* qs = b + 16;
  for (int s = 0; s < 8; ++s) {
    const float ds = d * static_cast<float>(sc[s]), dm = dmin * static_cast<float>(mn[s]);
    const uint8_t* q = qs + (s / 2) * 32;
    const int shift = (s % 2) * 4;
    for (int l = 0; l < 32; ++l) y[s * 32 + l] = ds * static_cast<float>((q[l] >> shift) & 0x0F) - dm;
  }
}

// Q5_K: d | dmin | scales[12] | qh[32] | qs[128]; nibbles as Q4_K, bit s of qh[l] is the fifth bit
// of element l of sub-block s.
void q5_k(const uint8_t* b, float* y) {
  const float d = f16_at(b), dmin = f16_at(b + 2);
  uint8_t sc[8], mn[8];
  scale_min_k4(b + 4, sc, mn);
  const uint8_t* qh = b + 16;
  const uint8_t* qs = b + 48;
  for (int s = 0; s < 8; ++s) {
    const float ds = d * static_cast<float>(sc[s]), dm = dmin * static_cast<float>(mn[s]);
    const uint8_t* q = qs + (s / 2) * 32;
    const int shift = (s % 2) * 4;
    for (int l = 0; l < 32; ++l) {
      const int v = ((q[l] >> shift) & 0x0F) | (((qh[l] >> s) & 1) << 4);
      y[s * 32 + l] = ds * static_cast<float>(v) - dm;
    }
  }
}

// Q6_K: ql[128] | qh[64] | int8 scales[16] | d. Element e = 128 h + r: low 4 bits from
// ql[64 h + r % 64] (high nibble when r >= 64), high 2 bits from qh[32 h + r % 32] at bit
// 2 (r / 32); y = (d * scales[e / 16]) * (q - 32).
void q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* scales = reinterpret_cast<const int8_t*>(b + 192);
  const float d = f16_at(b + 208);
  float ds[16];
  for (int i = 0; i < 16; ++i) ds[i] = d * static_cast<float>(scales[i]);
  for (int e = 0; e < QK_K; ++e) {
    const int h = e / 128, r = e % 128;
    const int lo = (ql[64 * h + r % 64] >> (4 * (r / 64))) & 0x0F;
    const int hi = (qh[32 * h + r % 32] >> (2 * (r / 32))) & 0x03;
    y[e] = ds[e / 16] * static_cast<float>((lo | (hi << 4)) - 32);
  }
}

// MXFP4: an e8m0 exponent e | 16 bytes of e2m1 nibbles (element j < 16 the low nibble of byte j,
// 16 + j the high one); y = d * k[q], d = 2^(e - 128) (ggml_e8m0_to_fp32_half: the float32 of bits
// 0x00200000 << e for e < 2, else (e - 1) << 23) and k the doubled e2m1 values (gguf MXFP4.kvalues).
void mxfp4(const uint8_t* b, float* y) {
  static constexpr int8_t kValues[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  const uint32_t e = b[0];
  const uint32_t bits = e < 2 ? 0x00200000u << e : (e - 1) << 23;
  float d;
  std::memcpy(&d, &bits, 4);
  const uint8_t* qs = b + 1;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kValues[qs[j] & 0x0F]);
    y[j + 16] = d * static_cast<float>(kValues[qs[j] >> 4]);
  }
}

template <typename T, typename F>
void elementwise(const uint8_t* src, float* out, size_t n, F f) {
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    out[i] = f(v);
  }
}

using BlockFn = void (*)(const uint8_t*, float*);

BlockFn block_fn(GgmlType type) {
  switch (type) {
    case GgmlType::Q4_0: return q4_0;
    case GgmlType::Q4_1: return q4_1;
    case GgmlType::Q5_0: return q5_0;
    case GgmlType::Q5_1: return q5_1;
    case GgmlType::Q8_0: return q8_0;
    case GgmlType::Q4_K: return q4_k;
    case GgmlType::Q5_K: return q5_k;
    case GgmlType::Q6_K: return q6_k;
    case GgmlType::MXFP4: return mxfp4;
    default: return nullptr;
  }
}

}  // namespace

bool can_dequantize(GgmlType type) {
  return block_fn(type) || type == GgmlType::F32 || type == GgmlType::F16 ||
         type == GgmlType::BF16 || type == GgmlType::F64;
}

const char* dequantize_supported_types() {
  return "F32, F16, BF16, F64, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, MXFP4";
}

void dequantize(GgmlType type, std::span<const uint8_t> src, std::span<float> out) {
  const GgmlTypeTraits* t = ggml_type_traits(static_cast<uint32_t>(type));
  MOBIUS_ASSERT(t && can_dequantize(type), "dequantize: unsupported ggml type");
  const size_t n = out.size();
  const size_t bs = static_cast<size_t>(t->block_size), ts = static_cast<size_t>(t->type_size);
  MOBIUS_ASSERT(n % bs == 0 && src.size() == n / bs * ts, "dequantize: size mismatch");
  switch (type) {
    case GgmlType::F32: std::memcpy(out.data(), src.data(), n * 4); return;
    case GgmlType::F16: return elementwise<uint16_t>(src.data(), out.data(), n, f16_to_f32);
    case GgmlType::BF16: return elementwise<uint16_t>(src.data(), out.data(), n, bf16_to_f32);
    case GgmlType::F64:
      return elementwise<double>(src.data(), out.data(), n, [](double v) { return static_cast<float>(v); });
    default: break;
  }
  BlockFn f = block_fn(type);
  for (size_t i = 0; i < n / bs; ++i) f(src.data() + i * ts, out.data() + i * bs);
}

}  // namespace mobius
