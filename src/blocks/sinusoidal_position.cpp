#include "blocks/sinusoidal_position.h"

#include <cmath>
#include <vector>

namespace mobius {

Value* sinusoidal_positions(Ops& op, Value* position_ids, int64_t num_positions, int64_t dim, DataType dtype) {
  const int64_t sentinel = dim % 2 == 0 ? dim / 2 : dim / 2 + 1;
  std::vector<float> table(static_cast<size_t>(num_positions * dim));
  for (int64_t pos = 0; pos < num_positions; ++pos) {
    auto angle = [&](int64_t j) {
      return static_cast<double>(pos) / std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / static_cast<double>(dim));
    };
    float* row = &table[static_cast<size_t>(pos * dim)];
    for (int64_t j = 0; j < dim; j += 2) row[j / 2] = static_cast<float>(std::sin(angle(j)));
    for (int64_t j = 1; j < dim; j += 2) row[sentinel + j / 2] = static_cast<float>(std::cos(angle(j)));
  }
  return op.Gather(op.builder().constant_float(table, {num_positions, dim}, dtype), position_ids);
}

Value* sinusoidal_positions_f32(Ops& op, Value* position_ids, int64_t num_positions, int64_t dim, DataType dtype) {
  const int64_t sentinel = dim % 2 == 0 ? dim / 2 : dim / 2 + 1;
  std::vector<float> rate(static_cast<size_t>(dim));
  for (int64_t j = 0; j < dim; ++j)
    rate[j] = 1.0f / static_cast<float>(std::pow(
                         10000.0, static_cast<double>(static_cast<float>(2 * (j / 2)) / static_cast<float>(dim))));
  std::vector<float> table(static_cast<size_t>(num_positions * dim));
  for (int64_t pos = 0; pos < num_positions; ++pos) {
    float* row = &table[static_cast<size_t>(pos * dim)];
    for (int64_t j = 0; j < dim; j += 2) row[j / 2] = std::sin(static_cast<float>(pos) * rate[j]);
    for (int64_t j = 1; j < dim; j += 2) row[sentinel + j / 2] = std::cos(static_cast<float>(pos) * rate[j]);
  }
  return op.Gather(op.builder().constant_float(table, {num_positions, dim}, dtype), position_ids);
}

namespace {

// freq[k] = exp(k * -(log(10000) / (half - 1))) in float32, as torch computes it.
std::vector<float> t2t_frequencies(int64_t half) {
  const float step = static_cast<float>(std::log(10000.0) / static_cast<double>(half - 1));
  std::vector<float> freq(static_cast<size_t>(half));
  for (int64_t k = 0; k < half; ++k) freq[k] = std::exp(static_cast<float>(k) * -step);
  return freq;
}

}  // namespace

Value* sinusoidal_positions_t2t(Ops& op, Value* position_ids, int64_t num_positions, int64_t dim,
                                int64_t padding_idx, DataType dtype) {
  const int64_t half = dim / 2;
  const std::vector<float> freq = t2t_frequencies(half);
  std::vector<float> table(static_cast<size_t>(num_positions * dim), 0.0f);
  for (int64_t pos = 0; pos < num_positions; ++pos) {
    if (pos == padding_idx) continue;
    float* row = &table[static_cast<size_t>(pos * dim)];
    for (int64_t k = 0; k < half; ++k) {
      const float angle = static_cast<float>(pos) * freq[k];
      row[k] = std::sin(angle);
      row[half + k] = std::cos(angle);
    }
  }
  return op.Gather(op.builder().constant_float(table, {num_positions, dim}, dtype), position_ids);
}

Value* sinusoidal_positions_computed(Ops& op, Value* position_ids, int64_t dim, DataType dtype) {
  const int64_t half = dim / 2;
  Value* freq = op.builder().constant_f32(t2t_frequencies(half), {half});
  Value* angle = op.Mul(op.Unsqueeze(op.Cast(position_ids, {.to = DataType::FLOAT}), {-1}), freq);
  Value* table = op.Concat({op.Sin(angle), op.Cos(angle)}, {.axis = -1});
  return dtype == DataType::FLOAT ? table : op.Cast(table, {.to = dtype});
}

}  // namespace mobius
