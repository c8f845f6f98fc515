// The layers of the BART family's encoder and decoder (transformers/models/bart/modeling_bart.py
// BartEncoderLayer / BartDecoderLayer; mbart, plbart, marian, pegasus, blenderbot(-small) and
// m2m_100 copy them under the same names):
//   encoder layer: self_attn, self_attn_layer_norm, fc1, act, fc2, final_layer_norm
//   decoder layer: self_attn (causal, cached), self_attn_layer_norm, encoder_attn (cross, cached:
//                  blocks/cross_attention.h), encoder_attn_layer_norm, fc1, act, fc2,
//                  final_layer_norm
// Every sublayer is residual; `placement` says where its LayerNorm sits:
//   post (BART, Marian, PLBart, BlenderbotSmall): x = norm(x + sublayer(x))
//   pre  (mBART, Pegasus, Blenderbot, M2M100):    x = x + sublayer(norm(x))
// Attention: q/k/v/out_proj with biases (attention_bias: BigBirdPegasus' use_bias; Whisper: k_proj
// without, k_bias), scaled by head_dim**-0.5; LayerNorms with bias. The encoder layer's self_attn
// children may be named otherwise (encoder_self_attn_names: BigBirdPegasusEncoderAttention's
// self.query / ... / output, LEDEncoderAttention's longformer_self_attn.query / ... / output).
// WhisperEncoderLayer / WhisperDecoderLayer are the pre-norm layers.
#pragma once

#include <string>

#include "blocks/cross_attention.h"
#include "blocks/mlp.h"
#include "tasks/layer_state.h"

namespace mobius {

enum class NormPlacement { post, pre };

struct Seq2SeqLayerOptions {
  int64_t d_model;
  int64_t num_heads;
  int64_t ffn_dim;
  std::string activation_function = "gelu";
  bool k_bias = true;  // false: k_proj of both attentions without a bias (WhisperAttention)
  float layer_norm_eps = 1e-5f;
  NormPlacement placement = NormPlacement::post;
  bool attention_bias = true;
  AttentionNames encoder_self_attn_names = {"q_proj", "k_proj", "v_proj", "out_proj"};
  DataType dtype = DataType::FLOAT;
};

// A residual sublayer with its LayerNorm placed as NormPlacement says.
class NormedResidual {
 public:
  NormedResidual(NormPlacement placement, const Norm* norm) : placement_(placement), norm_(norm) {}
  // The sublayer's input (x, or norm(x) before it).
  Value* input(Ops& op, Value* x) const { return placement_ == NormPlacement::pre ? norm_->forward(op, x) : x; }
  // x + y (then normalized, post).
  Value* output(Ops& op, Value* x, Value* y) const {
    Value* h = op.Add(x, y);
    return placement_ == NormPlacement::post ? norm_->forward(op, h) : h;
  }

 private:
  NormPlacement placement_;
  const Norm* norm_;
};

// BartEncoderLayer. forward: x [batch, seq, d_model], mask from padding_mask() -> same shape.
class Seq2SeqEncoderLayer : public Module {
 public:
  explicit Seq2SeqEncoderLayer(const Seq2SeqLayerOptions& o);
  Value* forward(Ops& op, Value* x, Value* mask) const;

  Attention* self_attn;
  Norm *self_attn_layer_norm, *final_layer_norm;
  FeedForward* ffn;  // fc1, fc2 directly under the layer

 private:
  NormPlacement placement_;
};

// BartDecoderLayer. forward: x [batch, seq, d_model]; self_mask from decoder_causal_mask(),
// cross_mask from cross_attention_mask() (or null: none); past: {self, cross} caches
// (tasks/text2text_generation.h); encoder_hidden_states null: the cross cache is complete
// (CrossAttention::forward). Returns the output and the presents {self, cross}.
class Seq2SeqDecoderLayer : public Module {
 public:
  explicit Seq2SeqDecoderLayer(const Seq2SeqLayerOptions& o);
  std::pair<Value*, std::vector<KVPair>> forward(Ops& op, Value* x, Value* self_mask, Value* encoder_hidden_states,
                                                 Value* cross_mask, const std::vector<KVPair>& past) const;

  Attention* self_attn;
  CrossAttention* encoder_attn;
  Norm *self_attn_layer_norm, *encoder_attn_layer_norm, *final_layer_norm;
  FeedForward* ffn;

 private:
  NormPlacement placement_;
};

}  // namespace mobius
