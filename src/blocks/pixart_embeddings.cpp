#include "blocks/pixart_embeddings.h"

#include "blocks/activation.h"

namespace mobius {

AdaLayerNormSingle::AdaLayerNormSingle(const AdaLayerNormSingleOptions& o) : o_(o) {
  const auto embedder = [&](const std::string& name, int64_t width) {
    return child<TimestepEmbedding>("emb." + name,
                                    TimestepEmbeddingOptions{.in_channels = 256, .time_embed_dim = width, .dtype = o.dtype});
  };
  timestep_embedder = embedder("timestep_embedder", o.dim);
  if (o.size_conditions) {
    resolution_embedder = embedder("resolution_embedder", o.dim / 3);
    aspect_ratio_embedder = embedder("aspect_ratio_embedder", o.dim / 3);
  }
  linear = child<Linear>("linear", LinearOptions{o.dim, 6 * o.dim, true, o.dtype});
}

AdaLayerNormSingleOutput AdaLayerNormSingle::forward(Ops& op, Value* timestep, Value* resolution,
                                                     Value* aspect_ratio) const {
  auto s = enter(op);
  const TimestepSinusoidOptions time_proj{.dim = 256, .dtype = o_.dtype};
  Value* emb = timestep_embedder->forward(op, timestep_sinusoids(op, timestep, time_proj));
  if (resolution_embedder) {
    auto size_emb = [&](const TimestepEmbedding* e, Value* v, int64_t n) {  // [batch, n] -> [batch, n * dim / 3]
      return op.Reshape(e->forward(op, timestep_sinusoids(op, op.Reshape(v, {-1}), time_proj)), {-1, n * (o_.dim / 3)});
    };
    emb = op.Add(emb, op.Concat({size_emb(resolution_embedder, resolution, 2),
                                 size_emb(aspect_ratio_embedder, aspect_ratio, 1)}, {.axis = 1}));
  }
  return {linear->forward(op, activation(op, "silu", emb)), emb};
}

PixArtTextProjection::PixArtTextProjection(int64_t in_features, int64_t hidden_size, DataType dtype) {
  linear_1 = child<Linear>("linear_1", LinearOptions{in_features, hidden_size, true, dtype});
  linear_2 = child<Linear>("linear_2", LinearOptions{hidden_size, hidden_size, true, dtype});
}

Value* PixArtTextProjection::forward(Ops& op, Value* caption) const {
  auto s = enter(op);
  return linear_2->forward(op, activation(op, "gelu_pytorch_tanh", linear_1->forward(op, caption)));
}

Value* modulated_out_norm(Ops& op, const LayerNorm& norm, Value* x, Value* table, Value* embedded) {
  std::vector<Value*> e = op.Split(op.Add(op.Unsqueeze(table, {0}), op.Unsqueeze(embedded, {1})), {1, 1}, {.axis = 1});
  return op.Add(op.Mul(norm.forward(op, x), op.Add(e[1], 1.0)), e[0]);  // shift e[0], scale e[1]
}

}  // namespace mobius
