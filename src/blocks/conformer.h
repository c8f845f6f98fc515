// The conformer encoder of wav2vec2-conformer (transformers/models/wav2vec2_conformer/
// modular_wav2vec2_conformer.py, Wav2Vec2ConformerEncoder; Gulati et al. 2020, arXiv:2005.08100).
// Each layer (Wav2Vec2ConformerEncoderLayer):
//   h = h + 0.5 * ffn1(ffn1_layer_norm(h))
//   h = h + self_attn(self_attn_layer_norm(h))
//   h = h + conv_module(h)
//   h = final_layer_norm(h + 0.5 * ffn2(ffn2_layer_norm(h)))
// conv_module (Wav2Vec2ConformerConvolutionModule), over [batch, channels, frames]:
//   LayerNorm -> pointwise_conv1 (hidden -> 2 hidden, no bias) -> GLU over the channels ->
//   depthwise_conv (kernel conv_depthwise_kernel_size, odd, "same" padding, no bias) ->
//   batch_norm (BatchNorm1d in eval: running statistics, eps 1e-5) -> hidden_act ->
//   pointwise_conv2 (no bias)
// self_attn (Wav2Vec2ConformerSelfAttention): linear_q/k/v/out with biases, scale head_dim^-0.5,
// and the position_embeddings_type:
//   "rotary": the layer's normalized input is rotated (rotate-half over each head, positions
//     0..frames-1, frequencies the checkpoint's `encoder.embed_positions.inv_freq`: a persistent
//     buffer, rotary_embedding_base^(-2i/head_dim) when transformers made it, but what it loads
//     is what it uses; wav2vec2-bert's buffer is not saved: computed from rotary_embedding_base)
//     before linear_q and linear_k (not linear_v)
//   "relative": Transformer-XL relative attention: sinusoids of the relative positions
//     frames-1 .. -(frames-1) projected by linear_pos (no bias); scores
//     = ((q + pos_bias_u) . k + shift((q + pos_bias_v) . pos)) * scale, where shift moves
//     row i's relative scores so that key j reads relative position i - j
//   "relative_key" (wav2vec2-bert): scores += (q . distance_embedding(clamp(j - i, -left, right)
//     + left)) * scale, distance_embedding [left + right + 1, head_dim]
//     (left_max_position_embeddings, right_max_position_embeddings)
//   null: plain attention.
// The encoder: padded frames zeroed, the layers, then layer_norm (eps layer_norm_eps). Its
// pos_conv_embed exists in the checkpoint but transformers 5.23's forward never applies it: its
// tensors stay unused. Every LayerNorm but the last has eps 1e-5 (nn.LayerNorm's default).
//
// The wav2vec2-bert variant (transformers/models/wav2vec2_bert/modular_wav2vec2_bert.py,
// Wav2Vec2BertEncoder; ConformerLayout::bert) differs in: every LayerNorm has eps layer_norm_eps,
// the conv module zeroes padded frames after its LayerNorm, pads the depthwise conv causally
// (kernel - 1 frames on the left) and normalizes with depthwise_layer_norm (LayerNorm over the
// channels) instead of batch_norm, and the encoder has no final layer_norm.
#pragma once

#include <vector>

#include "blocks/audio_encoder.h"
#include "blocks/conv_feature_encoder.h"
#include "blocks/linear.h"

namespace mobius {

enum class ConformerPositions { none, rotary, relative, relative_key };  // config position_embeddings_type
enum class ConformerLayout { wav2vec2_conformer, bert };  // the two families' conv module, norms

struct ConformerOptions {
  AudioEncoderOptions encoder;        // placement unused
  int64_t conv_depthwise_kernel_size = 31;
  ConformerPositions positions = ConformerPositions::relative;
  ConformerLayout layout = ConformerLayout::wav2vec2_conformer;
  double rotary_embedding_base = 10000;       // bert rotary (wav2vec2-conformer reads inv_freq)
  int64_t left_max_position_embeddings = 64;  // relative_key
  int64_t right_max_position_embeddings = 8;
};

// The position inputs of every layer's attention, made once per graph by ConformerEncoder.
struct ConformerPositionInputs {
  Value* cos = nullptr;       // rotary: [frames, 1, head_dim]
  Value* sin = nullptr;
  Value* relative = nullptr;  // relative: sinusoids [1, 2 * frames - 1, hidden]
};

class ConformerSelfAttention : public Module {
 public:
  explicit ConformerSelfAttention(const ConformerOptions& o);
  // x [batch, frames, hidden]; mask additive [batch, 1, frames, frames] or null.
  Value* forward(Ops& op, Value* x, Value* mask, const ConformerPositionInputs& pos) const;
  Linear *linear_q, *linear_k, *linear_v, *linear_out;
  Linear* linear_pos = nullptr;                           // relative
  Parameter *pos_bias_u = nullptr, *pos_bias_v = nullptr;  // relative: [heads, head_dim]
  Embedding* distance_embedding = nullptr;                // relative_key

 private:
  Value* heads(Ops& op, Value* x) const;  // [batch, frames, hidden] -> [batch, heads, frames, head_dim]
  Value* relative_key_bias(Ops& op, Value* q) const;  // [batch, heads, frames, frames]
  ConformerOptions o_;
  int64_t heads_, head_dim_;
};

class ConformerConvModule : public Module {
 public:
  explicit ConformerConvModule(const ConformerOptions& o);
  // x [batch, frames, hidden] -> same; frames_valid bool [batch, frames] or null (bert: padded
  // frames zeroed after the LayerNorm).
  Value* forward(Ops& op, Value* x, Value* frames_valid) const;
  LayerNorm* layer_norm;
  Conv1d *pointwise_conv1, *depthwise_conv, *pointwise_conv2;
  // wav2vec2_conformer: batch_norm.weight, .bias, .running_mean, .running_var
  Parameter *bn_weight = nullptr, *bn_bias = nullptr, *bn_mean = nullptr, *bn_var = nullptr;
  LayerNorm* depthwise_layer_norm = nullptr;  // bert

 private:
  ConformerOptions o_;
};

class ConformerLayer : public Module {
 public:
  explicit ConformerLayer(const ConformerOptions& o);
  Value* forward(Ops& op, Value* x, Value* mask, const ConformerPositionInputs& pos, Value* frames_valid) const;
  LayerNorm *ffn1_layer_norm, *self_attn_layer_norm, *ffn2_layer_norm, *final_layer_norm;
  MLP *ffn1, *ffn2;
  ConformerSelfAttention* self_attn;
  ConformerConvModule* conv_module;
};

class ConformerEncoder : public SpeechEncoderBody {
 public:
  explicit ConformerEncoder(const ConformerOptions& o);
  Value* forward(Ops& op, Value* h, Value* frames_valid) const override;
  LayerNorm* layer_norm = nullptr;  // wav2vec2_conformer
  std::vector<ConformerLayer*> layers;
  Parameter* inv_freq = nullptr;  // wav2vec2_conformer rotary: [head_dim / 2], embed_positions.inv_freq

 private:
  ConformerPositionInputs positions(Ops& op, Value* h) const;
  ConformerOptions o_;
};

}  // namespace mobius
