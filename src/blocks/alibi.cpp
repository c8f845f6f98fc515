#include "blocks/alibi.h"

#include <cmath>

#include "util/float16.h"

namespace mobius {

std::vector<float> alibi_slopes(int64_t n) {
  // As transformers: the base in float64, rounded to float32, raised to integer powers in float32.
  const int64_t c = int64_t{1} << static_cast<int>(std::floor(std::log2(static_cast<double>(n))));
  auto powers = [](double base, int64_t first, int64_t count, int64_t step) {
    std::vector<float> out;
    const float b = static_cast<float>(base);
    for (int64_t i = 0, k = first; i < count; ++i, k += step)
      out.push_back(static_cast<float>(std::pow(b, static_cast<float>(k))));
    return out;
  };
  std::vector<float> s = powers(std::pow(2.0, -std::pow(2.0, -(std::log2(double(c)) - 3))), 1, c, 1);
  if (c != n) {
    auto extra = powers(std::pow(2.0, -std::pow(2.0, -(std::log2(double(2 * c)) - 3))), 1,
                        std::min(c, n - c), 2);
    s.insert(s.end(), extra.begin(), extra.end());
  }
  return s;
}

std::vector<float> mpt_alibi_slopes(int64_t n, double alibi_bias_max) {
  const int64_t p = int64_t{1} << static_cast<int>(std::ceil(std::log2(static_cast<double>(n))));
  std::vector<float> all;
  const float step = static_cast<float>(alibi_bias_max / static_cast<double>(p));
  for (int64_t k = 1; k <= p; ++k)
    all.push_back(1.0f / std::pow(2.0f, static_cast<float>(k) * step));
  if (p == n) return all;
  std::vector<float> s;
  for (int64_t k = 1; k < p; k += 2) s.push_back(all[k]);
  for (int64_t k = 0; k < p; k += 2) s.push_back(all[k]);
  s.resize(static_cast<size_t>(n));
  return s;
}

Value* alibi_bias(Ops& op, const AlibiOptions& o, Value* attention_mask, DataType dtype) {
  auto s = op.builder().scope("alibi");
  GraphBuilder& b = op.builder();
  Value* pos;  // float32 [batch or 1, 1, 1, total]
  if (o.positions == AlibiPositions::MaskCumsum) {
    Value* cum = op.CumSum(attention_mask, b.scalar_i64(1));
    pos = op.Unsqueeze(op.Mul(op.Sub(cum, 1), attention_mask), {1, 2});
  } else {
    Value* total = op.Squeeze(op.Shape(attention_mask, {.start = 1, .end = 2}), {0});
    pos = op.Unsqueeze(op.Range(b.scalar_i64(0), total, b.scalar_i64(1)), {0, 1, 2});
  }
  pos = op.Cast(pos, {.to = DataType::FLOAT});
  auto to_bf16 = [&](Value* x) {
    return op.Cast(op.Cast(x, {.to = DataType::BFLOAT16}), {.to = DataType::FLOAT});
  };
  std::vector<float> slopes = o.slopes;
  if (o.bfloat16_product) {
    for (float& v : slopes) v = bf16_to_f32(f32_to_bf16(v));
    pos = to_bf16(pos);
  }
  const int64_t heads = static_cast<int64_t>(slopes.size());
  Value* bias = op.Mul(pos, b.constant_f32(slopes, {1, heads, 1, 1}));  // [b, heads, 1, total]
  if (o.bfloat16_product) bias = to_bf16(bias);
  if (o.scale != 1.0f) bias = op.Mul(bias, o.scale);
  return dtype == DataType::FLOAT ? bias : op.Cast(bias, {.to = dtype});
}

}  // namespace mobius
