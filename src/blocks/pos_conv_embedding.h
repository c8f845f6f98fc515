// The convolutional relative position embeddings of the wav2vec2 family, "pos_conv_embed" of the
// encoder; forward: x [batch, frames, hidden] -> the embedding to add, same shape.
//
// WeightNormConvEmbedding (transformers/models/wav2vec2/modeling_wav2vec2.py
// Wav2Vec2PositionalConvEmbedding + Wav2Vec2SamePadLayer; hubert, unispeech(-sat), wavlm, sew and
// wav2vec2-conformer copy it):
//   conv = weight_norm(Conv1d(hidden, hidden, kernel num_conv_pos_embeddings,
//                             padding kernel / 2, groups num_conv_pos_embedding_groups), dim=2)
//   y = act(conv(x^T)[..., :-1 if the kernel is even])^T
// (SEWPositionalConvEmbedding, transformers/models/sew/modular_sew.py: the same with stride
// squeeze_factor: (frames + 2 * (kernel / 2) - kernel) / squeeze_factor + 1 frames before the pad
// layer.)
// Weight norm (torch.nn.utils.parametrizations.weight_norm, dim 2): the conv weight is
//   w = g * v / ||v||, the norm over the output and input channels of each kernel tap,
// with g = `conv.parametrizations.weight.original0` [1, 1, kernel] and v = `...original1`
// [hidden, hidden / groups, kernel] (transformers 5 names; a legacy checkpoint's `conv.weight_g`
// / `conv.weight_v` are read under them, weights/weight_plan.h legacy_keys). The fold is composed
// in the graph from the two initializers exactly as torch computes it: onnxruntime constant-folds
// it when the session loads, so it costs nothing per run, the checkpoint's tensors are stored as
// they are (strict binding, `mobius apply-weights` byte checks) and weights/ needs no transform
// with a reduction over a whole tensor.
//
// StackedConvEmbedding (transformers/models/data2vec/modular_data2vec_audio.py
// Data2VecAudioPositionalConvEmbedding): num_conv_pos_embeddings layers `layers.{i}` of
//   h = act(LayerNorm_no_affine(Conv1d(hidden, hidden, conv_pos_kernel_size, padding k / 2,
//           groups)(h)[..., :-1 if k is even]))      (LayerNorm eps 1e-5 over the channels)
#pragma once

#include <string>
#include <vector>

#include "blocks/conv_feature_encoder.h"
#include "blocks/norms.h"

namespace mobius {

struct PosConvEmbeddingOptions {
  int64_t hidden_size;
  int64_t kernel_size;  // num_conv_pos_embeddings (wav2vec2) / conv_pos_kernel_size (data2vec-audio)
  int64_t groups;       // num_conv_pos_embedding_groups
  int64_t stride = 1;   // SEW: squeeze_factor (WeightNormConvEmbedding)
  std::string activation = "gelu";  // feat_extract_activation
  DataType dtype = DataType::FLOAT;
};

class PositionConvEmbedding : public Module {
 public:
  virtual Value* forward(Ops& op, Value* x) const = 0;
};

class WeightNormConvEmbedding : public PositionConvEmbedding {
 public:
  explicit WeightNormConvEmbedding(const PosConvEmbeddingOptions& o);
  Value* forward(Ops& op, Value* x) const override;
  Parameter *weight_g, *weight_v, *bias;

 private:
  PosConvEmbeddingOptions o_;
};

class StackedConvEmbedding : public PositionConvEmbedding {
 public:
  StackedConvEmbedding(const PosConvEmbeddingOptions& o, int64_t num_layers);
  Value* forward(Ops& op, Value* x) const override;
  std::vector<Conv1d*> convs;  // layers.{i}.conv
  LayerNorm* norm;             // without weight and bias

 private:
  PosConvEmbeddingOptions o_;
};

}  // namespace mobius
