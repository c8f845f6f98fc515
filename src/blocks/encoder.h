// The post-norm transformer encoder of the BERT family (transformers/models/bert/modeling_bert.py,
// BertModel without the pooler; the other members differ in names and small options, see
// archs/bert.cpp):
//   embeddings : LayerNorm(word_embeddings(input_ids) + position_embeddings(position_ids)
//                          [+ token_type_embeddings(token_type_ids)])   (BertEmbeddings)
//                [-> embeddings_project, when embedding_size != hidden_size (ELECTRA)]
//   each layer : h = LayerNorm(x + attention(x))                       (BertAttention)
//                out = LayerNorm(h + ffn_out(act(ffn_in(h))))           (BertIntermediate/Output)
//   pre-norm members (NormPlacement::pre: roberta-prelayernorm, xlm-roberta-xl, megatron-bert):
//                h = x + attention(attention_norm(x))
//                out = h + ffn_out(act(ffn_in(ffn_norm(h))))
//                and final_norm after the last layer
// Attention is bidirectional with a padding mask from attention_mask (MPNet: plus a relative
// position bias shared by the layers; RoFormer: RoPE instead of position embeddings), no cache.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "blocks/attention.h"
#include "blocks/relative_position_bias.h"
#include "blocks/seq2seq_layer.h"
#include "tasks/feature_extraction.h"
#include "tasks/text_heads.h"

namespace mobius {

// How the absolute position of each token is computed.
enum class PositionIds {
  // 0 .. seq-1 on every row, whatever the padding (BertEmbeddings: position_ids buffer).
  kArange,
  // padding_idx + (number of non-padding tokens up to and including this one) for tokens,
  // padding_idx for padding tokens, from input_ids != padding_idx
  // (RobertaEmbeddings.create_position_ids_from_input_ids).
  kFromInputIds,
};

// Child names of a layer as the checkpoint spells them (dotted names nest). Defaults: BERT.
struct EncoderLayerNames {
  std::string attention = "attention";  // the Attention module; its projections: AttentionOptions::names
  std::string attention_norm = "attention.output.LayerNorm";
  std::string ffn_in = "intermediate.dense";
  std::string ffn_out = "output.dense";
  std::string ffn_norm = "output.LayerNorm";
};

struct EncoderSpec {
  int64_t vocab_size;
  int64_t hidden_size;
  int64_t num_hidden_layers;
  int64_t max_position_embeddings;
  int64_t type_vocab_size = 0;  // 0: no token_type_embeddings and no token_type_ids input
  int64_t embedding_size = 0;   // width of the embeddings when not hidden_size (ELECTRA); 0 = hidden_size
  // the Linear from embedding_size to hidden_size when they differ (RemBERT: encoder.embedding_hidden_mapping_in)
  std::string embeddings_project = "embeddings_project";
  float layer_norm_eps = 1e-12f;
  PositionIds position_ids = PositionIds::kArange;
  int64_t padding_idx = 0;                 // PositionIds::kFromInputIds: config pad_token_id
  std::string layers = "encoder.layer";    // path of the layer list (DistilBERT: transformer.layer)
  EncoderLayerNames names;
  AttentionOptions attention;              // num_key_value_heads = num_attention_heads, biases on
  int64_t intermediate_size;
  std::string hidden_act = "gelu";
  DataType dtype = DataType::FLOAT;
  std::optional<TextHeadLayout> heads;  // the family's *For<Task> heads (tasks/text_heads.h)
  // > 0: MPNet's relative position bias, one table for every layer (encoder.relative_attention_bias,
  // T5's bidirectional buckets up to distance 128) added to the attention mask
  int64_t relative_attention_num_buckets = 0;
  // RoFormer: the checkpoint name of a [max_position_embeddings, head_dim] table whose row p holds
  // sin | cos of position p's angles (RoFormerSinusoidalPositionalEmbedding, saved with the
  // weights); no position_embeddings, q and k rotated at positions 0..seq-1 (AttentionOptions::
  // rope_interleaved says the layout). "" none.
  std::string rope_table;
  NormPlacement placement = NormPlacement::post;  // pre: the pre-norm layers above
  std::string embeddings_norm = "LayerNorm";       // the embeddings' LayerNorm; "" none (megatron-bert, xlm-roberta-xl)
  std::string final_norm;                          // pre-norm: the LayerNorm after the last layer; "" none
};

// BertEmbeddings. forward: input_ids int64 [batch, seq], token_type_ids int64 [batch, seq] (null
// when type_vocab_size is 0) -> [batch, seq, embedding_size].
class EncoderEmbeddings : public Module {
 public:
  explicit EncoderEmbeddings(const EncoderSpec& s);
  Value* forward(Ops& op, Value* input_ids, Value* token_type_ids) const;

  Embedding* word_embeddings;
  Embedding* position_embeddings = nullptr;  // none with RoPE
  Embedding* token_type_embeddings = nullptr;
  LayerNorm* layer_norm = nullptr;  // EncoderSpec::embeddings_norm

 private:
  // int64 position ids, [seq] (kArange) or [batch, seq] (kFromInputIds).
  Value* position_ids(Ops& op, Value* input_ids) const;
  PositionIds kind_;
  int64_t padding_idx_;
};

// BertLayer. forward: x [batch, seq, hidden_size] -> [batch, seq, hidden_size]; ctx.mask from
// padding_mask().
class EncoderLayer : public Module {
 public:
  explicit EncoderLayer(const EncoderSpec& s);
  Value* forward(Ops& op, Value* x, const AttentionContext& ctx) const;

  Attention* attention;
  LayerNorm *attention_norm, *ffn_norm;
  Linear *ffn_in, *ffn_out;

 private:
  std::string act_;
  NormPlacement placement_;
};

// The whole model (BertModel's last_hidden_state) under the feature-extraction task.
class PostNormEncoder : public Encoder {
 public:
  explicit PostNormEncoder(const EncoderSpec& s);
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return spec_.type_vocab_size > 0; }
  Value* forward(Ops& op, const EncoderInputs& in) const override;
  const TextHeadLayout* head_layout() const override { return spec_.heads ? &*spec_.heads : nullptr; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }

  EncoderEmbeddings* embeddings;
  Linear* embeddings_project = nullptr;  // ELECTRA, RoFormer, RemBERT with embedding_size != hidden_size
  std::vector<EncoderLayer*> layers;
  RelativePositionBias* relative_attention_bias = nullptr;  // MPNet
  LayerNorm* final_norm = nullptr;                           // pre-norm members
  Embedding* rope_table = nullptr;                           // RoFormer

 private:
  EncoderSpec spec_;
};

}  // namespace mobius
