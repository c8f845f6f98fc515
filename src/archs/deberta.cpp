// DeBERTa and DeBERTa-v2 (transformers/models/deberta/modeling_deberta.py, deberta_v2/
// modeling_deberta_v2.py and their configuration files; DebertaModel, DebertaV2Model):
//   embeddings (DebertaEmbeddings): x = word_embeddings(input_ids) [+ position_embeddings(0..seq-1)
//     when position_biased_input] [+ token_type_embeddings(token_type_ids) when type_vocab_size > 0],
//     of width embedding_size (default hidden_size) -> embed_proj (no bias) when it differs from
//     hidden_size -> LayerNorm -> * attention_mask (padded positions zeroed)
//   encoder: the DeBERTa encoder (blocks/deberta_encoder.h) with the disentangled attention;
//     deberta: fused projections (in_proj, q_bias, v_bias, pos_proj, pos_q_proj), no share_att_key,
//     no position buckets, no norm_rel_ebd or conv (DebertaEncoder); talking_head is refused
//     deberta-v2: query_proj / key_proj / value_proj, share_att_key, position_buckets, norm_rel_ebd,
//     conv_kernel_size (DebertaV2Encoder)
// Config fields as the config classes and the modeling code's getattr read them: relative_attention
// false, pos_att_type null (none; a "|"-separated string is split), max_relative_positions -1
// (max_position_embeddings), position_biased_input true, type_vocab_size 0, layer_norm_eps 1e-7,
// pooler_hidden_act "gelu", legacy true. z_steps is 0 in both models (no extra passes).
// Heads (base_model_prefix "deberta"):
//   fill-mask: legacy (LegacyDebertaOnlyMLMHead) cls.predictions.{transform.dense, hidden_act,
//     transform.LayerNorm, decoder (tied), bias}; legacy false (DebertaOnlyMLMHead)
//     lm_predictions.lm_head.{dense, hidden_act, LayerNorm, bias} against the word embeddings
//   text-classification and (deberta-v2 only) multiple-choice: ContextPooler pooler.dense +
//     pooler_hidden_act of the first token, then classifier
//   token-classification: classifier; question-answering: qa_outputs
#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/attention.h"
#include "blocks/deberta_encoder.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "tasks/feature_extraction.h"
#include "tasks/text_heads.h"

namespace mobius {
namespace {

struct DebertaSpec {
  DebertaEncoderOptions encoder;
  int64_t vocab_size;
  int64_t embedding_size;
  int64_t max_position_embeddings;
  int64_t type_vocab_size;
  bool position_biased_input;
  TextHeadLayout heads;
};

// DebertaEmbeddings. forward: input_ids, token_type_ids (null without token types) int64
// [batch, seq], attention_mask int64 [batch, seq] -> [batch, seq, hidden].
class DebertaEmbeddings : public Module {
 public:
  explicit DebertaEmbeddings(const DebertaSpec& s) {
    const DataType dtype = s.encoder.dtype;
    word_embeddings = child<Embedding>("word_embeddings", s.vocab_size, s.embedding_size, dtype);
    if (s.position_biased_input)
      position_embeddings = child<Embedding>("position_embeddings", s.max_position_embeddings, s.embedding_size, dtype);
    if (s.type_vocab_size > 0)
      token_type_embeddings = child<Embedding>("token_type_embeddings", s.type_vocab_size, s.embedding_size, dtype);
    if (s.embedding_size != s.encoder.hidden_size)
      embed_proj = child<Linear>("embed_proj", LinearOptions{s.embedding_size, s.encoder.hidden_size, false, dtype});
    layer_norm = child<LayerNorm>("LayerNorm", NormOptions{.dim = s.encoder.hidden_size,
                                                           .eps = s.encoder.layer_norm_eps, .dtype = dtype});
  }
  Value* forward(Ops& op, Value* input_ids, Value* token_type_ids, Value* attention_mask) const {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    Value* x = word_embeddings->forward(op, input_ids);
    if (position_embeddings) {
      Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
      x = op.Add(x, position_embeddings->forward(op, op.Range(b.scalar_i64(0), seq, b.scalar_i64(1))));
    }
    if (token_type_embeddings) x = op.Add(x, token_type_embeddings->forward(op, token_type_ids));
    if (embed_proj) x = embed_proj->forward(op, x);
    x = layer_norm->forward(op, x);
    return op.Mul(x, op.Unsqueeze(op.CastLike(attention_mask, x), {-1}));
  }

  Embedding* word_embeddings;
  Embedding* position_embeddings = nullptr;
  Embedding* token_type_embeddings = nullptr;
  Linear* embed_proj = nullptr;
  LayerNorm* layer_norm;
};

class DebertaModel : public Encoder {
 public:
  explicit DebertaModel(const DebertaSpec& s) : spec_(s) {
    embeddings = child<DebertaEmbeddings>("embeddings", s);
    encoder = child<DebertaEncoder>("encoder", s.encoder);
  }
  DataType dtype() const override { return spec_.encoder.dtype; }
  int64_t hidden_size() const override { return spec_.encoder.hidden_size; }
  bool has_token_type_ids() const override { return spec_.type_vocab_size > 0; }
  const TextHeadLayout* head_layout() const override { return &spec_.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* h = embeddings->forward(op, in.input_ids, in.token_type_ids, in.attention_mask);
    return encoder->forward(op, h, op.Cast(in.attention_mask, {.to = DataType::BOOL}));
  }

  DebertaEmbeddings* embeddings;
  DebertaEncoder* encoder;

 private:
  DebertaSpec spec_;
};

// The fields both versions read the same way; `base_class` the model without a head.
DebertaSpec deberta_spec(const HfConfig& c, DataType dtype, const std::string& base_class,
                         DisentangledProjections projections) {
  DebertaSpec s;
  DebertaEncoderOptions& e = s.encoder;
  e.dtype = dtype;
  e.hidden_size = c.get_int("hidden_size");
  e.num_hidden_layers = c.get_int("num_hidden_layers");
  e.intermediate_size = c.get_int("intermediate_size");
  e.hidden_act = c.string_or("hidden_act", "gelu");
  if (!is_known_activation(e.hidden_act)) c.fail("hidden_act", "unsupported activation '" + e.hidden_act + "'");
  e.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-7));
  const int64_t heads = c.get_int("num_attention_heads");
  if (heads <= 0 || e.hidden_size % heads != 0) c.fail("num_attention_heads", "must divide hidden_size");
  DisentangledAttentionOptions& a = e.attention;
  a.hidden_size = e.hidden_size;
  a.num_attention_heads = heads;
  a.head_dim = e.hidden_size / heads;
  a.dtype = dtype;
  a.projections = projections;
  read_disentangled_attention(c, a, {});
  s.vocab_size = c.get_int("vocab_size");
  s.embedding_size = c.int_or("embedding_size", e.hidden_size);
  if (s.embedding_size <= 0 || s.embedding_size > kMaxHiddenSize) c.fail("embedding_size", "expected a positive width");
  s.max_position_embeddings = c.int_or("max_position_embeddings", 512);
  s.type_vocab_size = c.int_or("type_vocab_size", 0);
  s.position_biased_input = c.bool_or("position_biased_input", true);
  // ContextPooler: Linear(pooler_hidden_size, pooler_hidden_size), the classifier over hidden_size
  if (c.int_or("pooler_hidden_size", e.hidden_size) != e.hidden_size)
    c.fail("pooler_hidden_size", "must equal hidden_size (the classifier reads the pooler's output)");
  const std::string pooler_act = c.string_or("pooler_hidden_act", "gelu");
  if (!is_known_activation(pooler_act)) c.fail("pooler_hidden_act", "unsupported activation '" + pooler_act + "'");
  const FirstTokenHead pooled{"pooler.dense", pooler_act, "classifier"};
  TextHeadLayout::MaskedLM lm{"cls.predictions.transform.dense", e.hidden_act, "cls.predictions.transform.LayerNorm",
                              "cls.predictions.decoder", "cls.predictions.bias", e.layer_norm_eps};
  if (!c.bool_or("legacy", true)) {  // DebertaLMPredictionHead: always against the word embeddings
    if (!c.bool_or("tie_word_embeddings", true))
      c.fail("tie_word_embeddings", "the legacy: false masked-LM head reads the word embeddings; false is not supported");
    lm = {"lm_predictions.lm_head.dense", e.hidden_act, "lm_predictions.lm_head.LayerNorm",
          "lm_predictions.lm_head.decoder", "lm_predictions.lm_head.bias", e.layer_norm_eps};
  }
  s.heads = TextHeadLayout{"deberta", base_class, lm, pooled, pooled};
  return s;
}

}  // namespace

std::unique_ptr<Architecture> create_deberta(const HfConfig& c, DataType dtype) {
  if (c.bool_or("talking_head", false)) c.fail("talking_head", "talking-head attention is not supported");
  DebertaSpec s = deberta_spec(c, dtype, "DebertaModel", DisentangledProjections::kFused);
  s.heads.missing = {"multiple-choice"};  // no DebertaForMultipleChoice
  return std::make_unique<DebertaModel>(s);
}

std::unique_ptr<Architecture> create_deberta_v2(const HfConfig& c, DataType dtype) {
  DebertaSpec s = deberta_spec(c, dtype, "DebertaV2Model", DisentangledProjections::kSeparate);
  read_deberta_v2_encoder(c, s.encoder);
  return std::make_unique<DebertaModel>(s);
}

}  // namespace mobius
