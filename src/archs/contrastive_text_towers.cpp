// The BERT / RoBERTa text towers of the contrastive image-text and audio-text models, each saved
// alone under its text config's model_type (transformers/models/<model>/modeling_<model>.py,
// configuration_<model>.py); feature-extraction, BERT's post-norm layers (blocks/encoder.h):
//   chinese_clip_text_model  ChineseCLIPTextModel: BERT (ChineseCLIPTextEmbeddings: position ids
//                            0..seq-1, type_vocab_size 2), pooler_output = tanh(pooler.dense(last[:, 0]))
//                            (ChineseCLIPTextPooler); word_embeddings row pad_token_id read as zeros,
//                            as transformers loads it (ChineseCLIPPreTrainedModel._init_weights)
//   align_text_model         AlignTextModel: the same (AlignTextEmbeddings, AlignTextPooler)
//   clap_text_model          ClapTextModel: RoBERTa (ClapTextEmbeddings: position ids counted from
//                            pad_token_id + 1 over the tokens, padding_idx default 1; type_vocab_size
//                            default 1), the same pooler (ClapTextPooler); its checkpoints also hold
//                            the persistent buffers embeddings.position_ids / token_type_ids, unread
//   clap_text_model with ClapTextModelWithProjection (config.json architectures; AudioLDM's
//                            text_encoder): ClapTextModel under text_model.*, inputs input_ids and
//                            attention_mask only (its forward takes no token_type_ids: type 0),
//                            outputs text_embeds = text_projection(pooler_output) [batch,
//                            projection_dim] (ClapProjectionLayer: linear1, projection_hidden_act,
//                            linear2; not normalized) and last_hidden_state
//   altclip_text_model       AltCLIPTextModel: RoBERTa under roberta.* (AltRobertaModel without
//                            pooler, layers roberta.encoder.layers.{i}), then
//                            last_hidden_state = transformation(pre_LN(last)) [batch, seq, project_dim]
//                            and pooler_output = last_hidden_state[:, 0] [batch, project_dim]
// All but ClapTextModelWithProjection take input_ids, attention_mask and token_type_ids, and output
// last_hidden_state and pooler_output (tasks/feature_extraction.h); no heads. The configs' own
// fields only: BertConfig's is_decoder / position_embedding_type are not read (these config
// classes have neither).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "archs/archs.h"
#include "archs/bert.h"
#include "blocks/activation.h"
#include "blocks/encoder.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "blocks/vision_transformer.h"

namespace mobius {
namespace {

// A BERT-family encoder and BertPooler: pooler_output = tanh(pooler.dense(last_hidden_state[:, 0])).
class PooledTextTower : public Encoder {
 public:
  explicit PooledTextTower(const EncoderSpec& s) : dtype_(s.dtype), hidden_size_(s.hidden_size) {
    encoder = adopt("", std::make_unique<PostNormEncoder>(s));
    pooler = child<Linear>("pooler.dense", LinearOptions{s.hidden_size, s.hidden_size, true, s.dtype});
  }
  DataType dtype() const override { return dtype_; }
  int64_t hidden_size() const override { return hidden_size_; }
  bool has_token_type_ids() const override { return encoder->has_token_type_ids(); }
  Value* forward(Ops& op, const EncoderInputs& in) const override { return encoder->forward(op, in); }
  EncoderOutputs forward_outputs(Ops& op, const EncoderInputs& in) const override {
    Value* last = forward(op, in);
    return {last, op.Tanh(pooler->forward(op, token_at(op, last, 0)))};
  }

  PostNormEncoder* encoder;
  Linear* pooler;

 private:
  DataType dtype_;
  int64_t hidden_size_;
};

// AltCLIPTextModel: roberta (AltRobertaModel, no pooler), pre_LN, transformation to project_dim;
// last_hidden_state the projected states, pooler_output their first token.
class AltClipTextModel : public Encoder {
 public:
  AltClipTextModel(const EncoderSpec& s, int64_t project_dim) : dtype_(s.dtype), project_dim_(project_dim) {
    roberta = adopt("roberta", std::make_unique<PostNormEncoder>(s));
    pre_ln = child<LayerNorm>("pre_LN", NormOptions{.dim = s.hidden_size, .eps = s.layer_norm_eps, .dtype = s.dtype});
    transformation = child<Linear>("transformation", LinearOptions{s.hidden_size, project_dim, true, s.dtype});
  }
  DataType dtype() const override { return dtype_; }
  int64_t hidden_size() const override { return project_dim_; }
  bool has_token_type_ids() const override { return roberta->has_token_type_ids(); }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    return transformation->forward(op, pre_ln->forward(op, roberta->forward(op, in)));
  }
  EncoderOutputs forward_outputs(Ops& op, const EncoderInputs& in) const override {
    Value* projected = forward(op, in);
    return {projected, token_at(op, projected, 0)};
  }

  PostNormEncoder* roberta;
  LayerNorm* pre_ln;
  Linear* transformation;

 private:
  DataType dtype_;
  int64_t project_dim_;
};

// ClapTextModelWithProjection: one graph "model", input_ids, attention_mask int64 [batch_size,
// sequence_length] -> text_embeds [batch_size, projection_dim], last_hidden_state [batch_size,
// sequence_length, hidden_size].
class ClapTextModelWithProjection : public Architecture {
 public:
  ClapTextModelWithProjection(const EncoderSpec& s, int64_t projection_dim, std::string act)
      : projection_dim_(projection_dim), act_(std::move(act)) {
    text = adopt("text_model", std::make_unique<PooledTextTower>(s));
    linear1 = child<Linear>("text_projection.linear1", LinearOptions{s.hidden_size, projection_dim, true, s.dtype});
    linear2 = child<Linear>("text_projection.linear2", LinearOptions{projection_dim, projection_dim, true, s.dtype});
  }
  std::string task() const override { return "feature-extraction"; }
  std::vector<NamedGraph> build_graphs() const override {
    Model model;
    GraphBuilder b(model.graph);
    Ops op(b);
    const Shape tokens{"batch_size", "sequence_length"};
    Value* ids = b.input("input_ids", DataType::INT64, tokens);
    Value* mask = b.input("attention_mask", DataType::INT64, tokens);
    Value* types = text->has_token_type_ids() ? op.Mul(ids, 0.0) : nullptr;  // the zeros buffer's type 0
    const EncoderOutputs out = text->forward_outputs(op, EncoderInputs{ids, mask, types, {}});
    Value* embeds = linear2->forward(op, activation(op, act_, linear1->forward(op, out.pooler_output)));
    b.output(embeds, "text_embeds", {"batch_size", projection_dim_});
    b.output(out.last_hidden_state, "last_hidden_state", {"batch_size", "sequence_length", text->hidden_size()});
    return single_graph(std::move(model), GraphLowering::attention);
  }

  PooledTextTower* text;
  Linear *linear1, *linear2;

 private:
  int64_t projection_dim_;
  std::string act_;
};

// RobertaEmbeddings' positions (the towers' copies of it): padding_idx pad_token_id.
EncoderSpec roberta_tower_spec(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_encoder_spec(c, dtype);
  s.position_ids = PositionIds::kFromInputIds;
  s.padding_idx = c.int_or("pad_token_id", 1);
  if (s.padding_idx < 0 || s.padding_idx >= s.max_position_embeddings)
    c.fail("pad_token_id", "the padding index must be a row of the position embeddings");
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_chinese_clip_text_model(const HfConfig& c, DataType dtype) {
  EncoderSpec s = bert_encoder_spec(c, dtype);
  // ChineseCLIPPreTrainedModel._init_weights zeroes word_embeddings.weight[padding_idx] after loading
  // (its slice is not marked initialized): transformers runs with that row zero
  if (c.has("pad_token_id")) {  // null: no padding_idx, nothing zeroed
    s.zeroed_word_row = c.get_int("pad_token_id");
    if (s.zeroed_word_row < 0 || s.zeroed_word_row >= s.vocab_size)
      c.fail("pad_token_id", "the padding index must be a row of the word embeddings");
  }
  return std::make_unique<PooledTextTower>(s);
}

std::unique_ptr<Architecture> create_align_text_model(const HfConfig& c, DataType dtype) {
  return std::make_unique<PooledTextTower>(bert_encoder_spec(c, dtype));
}

std::unique_ptr<Architecture> create_clap_text_model(const HfConfig& c, DataType dtype) {
  if (!c.names_architecture("ClapTextModelWithProjection"))
    return std::make_unique<PooledTextTower>(roberta_tower_spec(c, dtype));
  const int64_t projection_dim = c.int_or("projection_dim", 512);
  if (projection_dim < 1 || projection_dim > kMaxHiddenSize) c.fail("projection_dim", "expected a positive width");
  std::string act = c.string_or("projection_hidden_act", "relu");
  if (!is_known_activation(act)) c.fail("projection_hidden_act", "unsupported activation '" + act + "'");
  return std::make_unique<ClapTextModelWithProjection>(roberta_tower_spec(c, dtype), projection_dim, std::move(act));
}

std::unique_ptr<Architecture> create_altclip_text_model(const HfConfig& c, DataType dtype) {
  EncoderSpec s = roberta_tower_spec(c, dtype);
  s.layers = "encoder.layers";  // AltRobertaEncoder.layers
  const int64_t project_dim = c.int_or("project_dim", 768);
  if (project_dim < 1 || project_dim > kMaxHiddenSize) c.fail("project_dim", "expected a positive width");
  return std::make_unique<AltClipTextModel>(s, project_dim);
}

}  // namespace mobius
