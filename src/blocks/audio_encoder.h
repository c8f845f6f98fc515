// The transformer encoder of the wav2vec2 family over the conv features
// (transformers/models/wav2vec2/modeling_wav2vec2.py; hubert, data2vec-audio, unispeech,
// unispeech-sat and wavlm copy it):
//   NormPlacement::post (Wav2Vec2Encoder, do_stable_layer_norm false):
//     h = LayerNorm(h + pos_conv_embed(h)); each layer (Wav2Vec2EncoderLayer)
//       h = layer_norm(h + attention(h)); h = final_layer_norm(h + feed_forward(h))
//   NormPlacement::pre (Wav2Vec2EncoderStableLayerNorm, do_stable_layer_norm true):
//     h = h + pos_conv_embed(h); each layer (Wav2Vec2EncoderLayerStableLayerNorm)
//       h = h + attention(layer_norm(h)); h = h + feed_forward(final_layer_norm(h));
//     then h = LayerNorm(h)
// With a frame mask, padded frames are zeroed before the position embedding and masked out of
// attention as keys (create_bidirectional_mask). feed_forward: intermediate_dense -> hidden_act
// -> output_dense (Wav2Vec2FeedForward). The attention is injected (AudioAttention): the plain
// Wav2Vec2Attention below, or WavLM's gated relative position attention (archs/wavlm.cpp).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "blocks/attention.h"
#include "blocks/mlp.h"
#include "blocks/pos_conv_embedding.h"
#include "blocks/seq2seq_layer.h"

namespace mobius {

struct AudioEncoderOptions {
  int64_t hidden_size;
  int64_t num_hidden_layers;
  int64_t num_attention_heads;
  int64_t intermediate_size;
  std::string hidden_act = "gelu";
  float layer_norm_eps = 1e-5f;
  NormPlacement placement = NormPlacement::post;
  DataType dtype = DataType::FLOAT;
};

// Per-graph inputs of every layer's attention.
struct AudioAttentionContext {
  Value* mask = nullptr;  // additive [batch, 1, frames, frames] (padding) or null (no padding mask)
  Value* position_bias = nullptr;  // [1 or batch, heads, frames, frames] from position_bias() or null
};

// The self-attention of a layer, registered as "attention".
class AudioAttention : public Module {
 public:
  // x: [batch, frames, hidden] -> [batch, frames, hidden].
  virtual Value* forward(Ops& op, Value* x, const AudioAttentionContext& ctx) const = 0;
  // The position bias this attention computes for the whole stack from x [batch, frames, hidden]
  // (WavLM's first layer), or null.
  virtual Value* position_bias(Ops& op, Value* x) const { return nullptr; }
};

// Wav2Vec2Attention: q/k/v/out_proj with biases, scale head_dim^-0.5 (blocks/attention.h).
class Wav2Vec2Attention : public AudioAttention {
 public:
  explicit Wav2Vec2Attention(const AudioEncoderOptions& o);
  Value* forward(Ops& op, Value* x, const AudioAttentionContext& ctx) const override;
  Attention* attention;  // at this module's path
};

// Makes layer i's attention.
using AudioAttentionFactory = std::function<std::unique_ptr<AudioAttention>(int64_t layer)>;

// Wav2Vec2EncoderLayer (post) / Wav2Vec2EncoderLayerStableLayerNorm (pre).
// forward: x [batch, frames, hidden] -> same.
class AudioEncoderLayer : public Module {
 public:
  AudioEncoderLayer(const AudioEncoderOptions& o, std::unique_ptr<AudioAttention> attention);
  Value* forward(Ops& op, Value* x, const AudioAttentionContext& ctx) const;
  AudioAttention* attention;
  LayerNorm *layer_norm, *final_layer_norm;
  MLP* feed_forward;

 private:
  NormPlacement placement_;
};

// The encoder over the projected conv features, registered as "encoder": the one below, or the
// conformer stack (blocks/conformer.h).
class SpeechEncoderBody : public Module {
 public:
  // h [batch, frames, hidden]; frames_valid: bool [batch, frames] (true = a frame of the row's
  // audio) or null (no padding mask) -> last_hidden_state [batch, frames, hidden].
  virtual Value* forward(Ops& op, Value* h, Value* frames_valid) const = 0;
};

class AudioTransformerEncoder : public SpeechEncoderBody {
 public:
  // pos_conv_embed: the family's position embedding (blocks/pos_conv_embedding.h); attention:
  // each layer's attention.
  AudioTransformerEncoder(const AudioEncoderOptions& o, std::unique_ptr<PositionConvEmbedding> pos_conv_embed,
                          const AudioAttentionFactory& attention);
  Value* forward(Ops& op, Value* h, Value* frames_valid) const override;
  PositionConvEmbedding* pos_conv_embed;
  LayerNorm* layer_norm;
  std::vector<AudioEncoderLayer*> layers;

 private:
  AudioEncoderOptions o_;
};

}  // namespace mobius
