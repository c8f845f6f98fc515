#include "blocks/timestep_embedding.h"

#include <cmath>

#include "blocks/activation.h"

namespace mobius {

Value* timestep_sinusoids(Ops& op, Value* t, const TimestepSinusoidOptions& o) {
  const int64_t half = o.dim / 2;
  std::vector<float> freq(half);
  // in float32 arithmetic as torch: (-ln(10000) * arange(half, float32)) / (half - shift), exp
  const float log_period = static_cast<float>(-std::log(10000.0));
  const float denominator = static_cast<float>(static_cast<double>(half) - o.downscale_freq_shift);
  for (int64_t k = 0; k < half; ++k) freq[k] = std::exp((log_period * static_cast<float>(k)) / denominator);
  Value* angles = op.Mul(op.Unsqueeze(op.Cast(t, {DataType::FLOAT}), {1}), op.builder().constant_f32(freq, {1, half}));
  Value* sin = op.Sin(angles);
  Value* cos = op.Cos(angles);
  std::vector<Value*> parts = o.flip_sin_to_cos ? std::vector<Value*>{cos, sin} : std::vector<Value*>{sin, cos};
  if (o.dim % 2 == 1) parts.push_back(op.Mul(op.Slice(angles, {0}, {1}, {1}), 0.0));  // [n, 1] zeros
  Value* e = op.Concat(parts, {.axis = 1});
  return o.dtype == DataType::FLOAT ? e : op.Cast(e, {o.dtype});
}

TimestepEmbedding::TimestepEmbedding(const TimestepEmbeddingOptions& o) : act_(o.act) {
  linear_1 = child<Linear>("linear_1", LinearOptions{o.in_channels, o.time_embed_dim, true, o.dtype});
  linear_2 = child<Linear>("linear_2", LinearOptions{o.time_embed_dim, o.time_embed_dim, true, o.dtype});
}

Value* TimestepEmbedding::forward(Ops& op, Value* x) const {
  auto s = enter(op);
  return linear_2->forward(op, activation(op, act_, linear_1->forward(op, x)));
}

CombinedTimestepLabelEmbeddings::CombinedTimestepLabelEmbeddings(int64_t num_classes, int64_t dim, DataType dtype) {
  timestep_embedder = child<TimestepEmbedding>(
      "timestep_embedder", TimestepEmbeddingOptions{.in_channels = 256, .time_embed_dim = dim, .dtype = dtype});
  class_embedder = child<Embedding>("class_embedder.embedding_table", num_classes + 1, dim, dtype);
}

Value* CombinedTimestepLabelEmbeddings::forward(Ops& op, Value* t_proj, Value* class_labels) const {
  auto s = enter(op);
  return op.Add(timestep_embedder->forward(op, t_proj), class_embedder->forward(op, class_labels));
}

}  // namespace mobius
