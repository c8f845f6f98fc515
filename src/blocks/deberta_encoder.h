// The DeBERTa encoder: transformers/models/deberta_v2/modeling_deberta_v2.py DebertaV2Encoder,
// copied by sew_d/modeling_sew_d.py (SEWDTransformerEncoder); deberta/modeling_deberta.py's
// DebertaEncoder is it without norm_rel_ebd and conv, with fused attention projections.
//   r = LayerNorm(rel_embeddings.weight)     ("layer_norm" in norm_rel_ebd; [2 * span, hidden])
//   each layer (DebertaV2Layer, post-norm BERT):
//     a = attention.output.LayerNorm(attention.output.dense(attention.self(h, r)) + h)
//     h = output.LayerNorm(output.dense(hidden_act(intermediate.dense(a))) + a)
//   after layer 0, with conv_kernel_size > 0 (ConvLayer, `conv`):
//     h = LayerNorm(h + conv_act(conv(h0) with padded positions zeroed)) * mask, h0 the layer's input
// attention.self is the disentangled attention (blocks/disentangled_attention.h); every layer gets
// the mask of get_attention_mask (XSoftmax): a token attends the tokens, a padded position (its row
// all masked) every position alike (the mean of the values).
#pragma once

#include <string>
#include <vector>

#include "blocks/disentangled_attention.h"
#include "blocks/norms.h"
#include "config/hf_config.h"
#include "nn/module.h"

namespace mobius {

class Conv1d;
class Embedding;

struct DebertaEncoderOptions {
  int64_t hidden_size;
  int64_t num_hidden_layers;
  int64_t intermediate_size;
  std::string hidden_act = "gelu";
  float layer_norm_eps = 1e-7f;
  DisentangledAttentionOptions attention;
  bool norm_rel_ebd = false;      // "layer_norm" in norm_rel_ebd
  int64_t conv_kernel_size = 0;   // > 0: ConvLayer after layer 0
  int64_t conv_groups = 1;
  std::string conv_act = "tanh";
  DataType dtype = DataType::FLOAT;
};

// The attention fields of a DeBERTa / DeBERTa-v2 / SEW-D config.json into `a` (hidden_size, heads,
// head_dim, dtype and projections already set), as DisentangledSelfAttention reads them (getattr
// defaults where the config class has none): relative_attention (false), pos_att_type (a list or a
// "|"-separated string of c2p / p2c; `default_pos_att_type` when absent, none when null),
// max_relative_positions (< 1: max_position_embeddings), and for kSeparate projections (DeBERTa-v2's
// attention; DeBERTa's reads neither) share_att_key (false) and position_buckets (-1). Fails naming the
// field for an unknown pos_att_type entry or a span / bucket count out of range.
void read_disentangled_attention(const HfConfig& c, DisentangledAttentionOptions& a,
                                 const std::vector<std::string>& default_pos_att_type);

// The encoder fields of DebertaV2Encoder and its ConvLayer into `o`: norm_rel_ebd ("none"),
// conv_kernel_size (0), conv_groups (1), conv_act ("tanh"). Fails naming the field for an even
// kernel, groups that do not divide hidden_size or an unknown activation.
void read_deberta_v2_encoder(const HfConfig& c, DebertaEncoderOptions& o);

// DebertaV2Layer. forward: h [batch, seq, hidden], r [2 * span, hidden] (null without relative
// attention), index disentangled_position_index(seq), mask additive [batch, 1, seq, seq] and
// query_valid bool [batch, 1, seq, 1], or both null.
class DebertaLayer : public Module {
 public:
  explicit DebertaLayer(const DebertaEncoderOptions& o);
  Value* forward(Ops& op, Value* h, Value* rel, Value* index, Value* mask, Value* query_valid) const;

  DisentangledSelfAttention* self;
  Linear *attention_dense, *intermediate, *output;
  LayerNorm *attention_norm, *output_norm;

 private:
  std::string act_;
};

// ConvLayer: h0, residual [batch, seq, hidden]; valid bool [batch, seq] or null -> [batch, seq, hidden].
class DebertaConvLayer : public Module {
 public:
  explicit DebertaConvLayer(const DebertaEncoderOptions& o);
  Value* forward(Ops& op, Value* h0, Value* residual, Value* valid) const;

  Conv1d* conv;
  LayerNorm* norm;

 private:
  std::string act_;
};

// The encoder: layer.{i}, rel_embeddings, LayerNorm (norm_rel_ebd), conv.
class DebertaEncoder : public Module {
 public:
  explicit DebertaEncoder(const DebertaEncoderOptions& o);
  // h [batch, seq, hidden]; valid: bool [batch, seq] (true = a token) or null -> [batch, seq, hidden].
  Value* forward(Ops& op, Value* h, Value* valid) const;

  std::vector<DebertaLayer*> layers;
  Embedding* rel_embeddings = nullptr;
  LayerNorm* rel_norm = nullptr;
  DebertaConvLayer* conv = nullptr;

 private:
  DebertaEncoderOptions o_;
};

}  // namespace mobius
