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
// A family replaces parts through EncoderParts: its layers (X-MOD: a language adapter on the
// feed-forward sum, EncoderLayer::ffn_residual) or its embeddings over further graph inputs
// (TokenEmbeddings and Encoder::extra_inputs: RoC-BERT, LayoutLM, MarkupLM).
// Attention is bidirectional with a padding mask from attention_mask (MPNet: plus a relative
// position bias shared by the layers; RoFormer: RoPE instead of position embeddings), no cache.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blocks/attention.h"
#include "blocks/relative_position_bias.h"
#include "blocks/seq2seq_layer.h"
#include "config/hf_config.h"
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

// The absolute position of each token of input_ids int64 [batch, seq]: int64 [seq] (kArange) or
// [batch, seq] (kFromInputIds, counted from padding_idx).
Value* token_positions(Ops& op, Value* input_ids, PositionIds kind, int64_t padding_idx);

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
  // PositionIds::kArange: the first row read (Nystromformer, YOSO: positions 2..seq+1, the table
  // max_position_embeddings + 2 rows: max_position_embeddings counts them all)
  int64_t position_offset = 0;
  // >= 0: the word_embeddings row read as zeros whatever the checkpoint holds (ChineseCLIP: its
  // _init_weights zeroes row pad_token_id of a checkpoint it loads); -1 none
  int64_t zeroed_word_row = -1;
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

// BERT's multi-head self-attention over `hidden` features (BertSelfAttention and the encoders that
// copy it): num_attention_heads = num_key_value_heads = the config's `heads_field`, head_dim
// hidden / heads, biases on q, k, v and o, the projections named `names`. Throws mobius::Error
// naming heads_field when it is not positive or does not divide hidden (`hidden_field` names the
// width in the message).
AttentionOptions encoder_attention(const HfConfig& c, int64_t hidden, DataType dtype, AttentionNames names,
                                   const std::string& heads_field = "num_attention_heads",
                                   const std::string& hidden_field = "hidden_size");

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
  PositionIds kind_;
  int64_t padding_idx_, position_offset_, zeroed_word_row_;
};

// BertLayer. forward: x [batch, seq, hidden_size] -> [batch, seq, hidden_size]; ctx.mask from
// padding_mask().
class EncoderLayer : public Module {
 public:
  explicit EncoderLayer(const EncoderSpec& s);
  // With a family's own self-attention in place of Attention(s.attention), named names.attention:
  // an Attention subclass over BERT's projections whose forward computes the mixing
  // (archs/nystromformer.cpp, archs/yoso.cpp).
  EncoderLayer(const EncoderSpec& s, std::unique_ptr<Attention> own_attention);
  Value* forward(Ops& op, Value* x, const AttentionContext& ctx) const;

  Attention* attention;
  LayerNorm *attention_norm, *ffn_norm;
  Linear *ffn_in, *ffn_out;

 protected:
  // The feed-forward block's output plus its residual, [batch, seq, hidden_size], before the
  // post-norm ffn_norm (pre-norm: the layer's output). BERT: as it is; X-MOD: its language adapter.
  virtual Value* ffn_residual(Ops& op, Value* sum) const {
    (void)op;
    return sum;
  }

 private:
  std::string act_;
  NormPlacement placement_;
};

// A family's own embeddings in place of EncoderEmbeddings (RoC-BERT's shape and pronunciation
// ids, LayoutLM's boxes). forward: the encoder's inputs (its extra_inputs included) ->
// [batch, seq, hidden_size].
class TokenEmbeddings : public Module {
 public:
  virtual Value* forward(Ops& op, const EncoderInputs& in) const = 0;
  virtual const Embedding* word_embeddings() const = 0;  // what a masked-LM decoder is tied to
};

// Makes layer `index` (0-based) of the encoder; the encoder names it EncoderSpec::layers.<index>.
using EncoderLayerFactory = std::function<std::unique_ptr<EncoderLayer>(const EncoderSpec&, int64_t index)>;

// The parts a family replaces in PostNormEncoder (all optional).
struct EncoderParts {
  EncoderLayerFactory make_layer;                // null: EncoderLayer (X-MOD: its adapters)
  std::unique_ptr<TokenEmbeddings> embeddings;   // null: EncoderEmbeddings; named "embeddings"
  std::vector<ExtraInput> extra_inputs;          // the further graph inputs `embeddings` reads
};

// The whole model (BertModel's last_hidden_state) under the feature-extraction task.
class PostNormEncoder : public Encoder {
 public:
  explicit PostNormEncoder(const EncoderSpec& s, EncoderParts parts = {});
  DataType dtype() const override { return spec_.dtype; }
  int64_t hidden_size() const override { return spec_.hidden_size; }
  bool has_token_type_ids() const override { return spec_.type_vocab_size > 0; }
  std::vector<ExtraInput> extra_inputs() const override { return extra_inputs_; }
  Value* forward(Ops& op, const EncoderInputs& in) const override;
  const TextHeadLayout* head_layout() const override { return spec_.heads ? &*spec_.heads : nullptr; }
  const Embedding* word_embeddings() const override {
    return embeddings ? embeddings->word_embeddings : token_embeddings->word_embeddings();
  }

  EncoderEmbeddings* embeddings = nullptr;
  TokenEmbeddings* token_embeddings = nullptr;  // EncoderParts::embeddings, instead of `embeddings`
  Linear* embeddings_project = nullptr;  // ELECTRA, RoFormer, RemBERT with embedding_size != hidden_size
  std::vector<EncoderLayer*> layers;
  RelativePositionBias* relative_attention_bias = nullptr;  // MPNet
  LayerNorm* final_norm = nullptr;                           // pre-norm members
  Embedding* rope_table = nullptr;                           // RoFormer

 private:
  EncoderSpec spec_;
  std::vector<ExtraInput> extra_inputs_;
};

}  // namespace mobius
