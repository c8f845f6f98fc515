// ESM (transformers/models/esm/modeling_esm.py, configuration_esm.py; EsmModel, the protein
// language models ESM-1b / ESM-2; not ESMFold's folding trunk, is_folding_model):
//   embeddings (EsmEmbeddings): x = word_embeddings(input_ids)
//     token_dropout: x = 0 at mask_token_id, then x * (1 - 0.15 * 0.8) / (1 - masked / tokens) per
//       row (masked: the row's mask tokens, tokens: its attention_mask sum), as at inference
//     position_embedding_type "absolute": + position_embeddings(RoBERTa's position ids from
//       input_ids, padding_idx pad_token_id); "rotary": none, q and k rotated (rotate_half) at
//       positions 0..seq-1 by cos / sin of position * rotary_embeddings.inv_freq (saved with the weights)
//     emb_layer_norm_before: layer_norm; then x * attention_mask
//   layers: pre-norm BERT layers (blocks/encoder.h EncoderLayer, NormPlacement::pre):
//     attention.LayerNorm, attention.self.{query, key, value}, attention.output.dense,
//     LayerNorm, intermediate.dense, exact GELU (ESM's gelu, whatever hidden_act), output.dense
//   encoder.emb_layer_norm_after after the last layer
// Heads (base_model_prefix "esm"; no question answering, no multiple choice): fill-mask
// lm_head.{dense, gelu, layer_norm, decoder (tied; no bias of its own), bias}; text-classification
// classifier.dense + tanh + classifier.out_proj (EsmClassificationHead); token-classification
// classifier. The contact-prediction head (contact_head) reads attention maps, not part of
// last_hidden_state: unread.
#include "archs/archs.h"
#include "blocks/encoder.h"
#include "blocks/spec_check.h"

namespace mobius {
namespace {

struct EsmSpec {
  EncoderSpec encoder;  // sizes, the layers' names and placement, heads
  bool rotary;
  bool token_dropout;
  int64_t mask_token_id;
};

// EsmEmbeddings. forward: input_ids, attention_mask int64 [batch, seq] -> [batch, seq, hidden].
class EsmEmbeddings : public Module {
 public:
  explicit EsmEmbeddings(const EsmSpec& s)
      : token_dropout_(s.token_dropout), mask_token_id_(s.mask_token_id), padding_idx_(s.encoder.padding_idx) {
    const EncoderSpec& e = s.encoder;
    word_embeddings = child<Embedding>("word_embeddings", e.vocab_size, e.hidden_size, e.dtype);
    if (!s.rotary)
      position_embeddings = child<Embedding>("position_embeddings", e.max_position_embeddings, e.hidden_size, e.dtype);
    if (!e.embeddings_norm.empty())
      layer_norm = child<LayerNorm>(e.embeddings_norm, NormOptions{.dim = e.hidden_size, .eps = e.layer_norm_eps,
                                                                   .dtype = e.dtype});
  }
  Value* forward(Ops& op, Value* input_ids, Value* attention_mask) const {
    auto s = enter(op);
    Value* x = word_embeddings->forward(op, input_ids);
    Value* mask = op.CastLike(attention_mask, x);  // [batch, seq]
    if (token_dropout_) {
      Value* is_mask = op.Equal(input_ids, static_cast<double>(mask_token_id_));
      x = op.Where(op.Unsqueeze(is_mask, {-1}), 0.0, x);
      Value* observed = op.Div(op.ReduceSum(op.CastLike(is_mask, x), {-1}), op.ReduceSum(mask, {-1}));  // [batch, 1]
      x = op.Div(op.Mul(x, 1.0 - 0.15 * 0.8), op.Unsqueeze(op.Sub(1.0, observed), {-1}));
    }
    if (position_embeddings) {  // RoBERTa's: padding_idx + running count of non-padding ids
      Value* is_token = op.Cast(op.Not(op.Equal(input_ids, static_cast<double>(padding_idx_))), {.to = DataType::INT64});
      Value* count = op.CumSum(is_token, op.builder().scalar_i64(1));
      x = op.Add(x, position_embeddings->forward(op, op.Add(op.Mul(count, is_token), static_cast<double>(padding_idx_))));
    }
    if (layer_norm) x = layer_norm->forward(op, x);
    return op.Mul(x, op.Unsqueeze(mask, {-1}));
  }

  Embedding* word_embeddings;
  Embedding* position_embeddings = nullptr;
  LayerNorm* layer_norm = nullptr;

 private:
  bool token_dropout_;
  int64_t mask_token_id_, padding_idx_;
};

class EsmModel : public Encoder {
 public:
  explicit EsmModel(const EsmSpec& s) : spec_(s) {
    const EncoderSpec& e = s.encoder;
    check_spec(e);
    embeddings = child<EsmEmbeddings>("embeddings", s);
    if (s.rotary) inv_freq = param("rotary_embeddings.inv_freq", {e.attention.head_dim / 2}, DataType::FLOAT);
    for (int64_t i = 0; i < e.num_hidden_layers; ++i)
      layers.push_back(child<EncoderLayer>(e.layers + "." + std::to_string(i), e));
    final_norm = child<LayerNorm>(e.final_norm, NormOptions{.dim = e.hidden_size, .eps = e.layer_norm_eps, .dtype = e.dtype});
  }
  DataType dtype() const override { return spec_.encoder.dtype; }
  int64_t hidden_size() const override { return spec_.encoder.hidden_size; }
  bool has_token_type_ids() const override { return false; }
  const TextHeadLayout* head_layout() const override { return &*spec_.encoder.heads; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* h = embeddings->forward(op, in.input_ids, in.attention_mask);
    AttentionContext ctx{padding_mask(op, in.attention_mask, spec_.encoder.dtype)};
    if (inv_freq) {  // EsmRotaryEmbedding: angles position * inv_freq in float32, [batch, seq, head_dim / 2]
      GraphBuilder& b = op.builder();
      Value* seq = op.Squeeze(op.Shape(in.input_ids, {.start = 1, .end = 2}), {0});
      Value* positions = op.Expand(op.Range(b.scalar_i64(0), seq, b.scalar_i64(1)), op.Shape(in.input_ids));
      Value* angles = op.Mul(op.Unsqueeze(op.Cast(positions, {.to = DataType::FLOAT}), {-1}), inv_freq->value(op));
      ctx.rope = RopeTables{.cos = op.CastLike(op.Cos(angles), h), .sin = op.CastLike(op.Sin(angles), h), .rotary_dim = 0};
    }
    for (const EncoderLayer* layer : layers) h = layer->forward(op, h, ctx);
    return final_norm->forward(op, h);
  }

  EsmEmbeddings* embeddings;
  Parameter* inv_freq = nullptr;
  std::vector<EncoderLayer*> layers;
  LayerNorm* final_norm;

 private:
  EsmSpec spec_;
};

}  // namespace

std::unique_ptr<Architecture> create_esm(const HfConfig& c, DataType dtype) {
  if (c.bool_or("is_folding_model", false)) c.fail("is_folding_model", "ESMFold's folding trunk is not supported");
  if (c.bool_or("is_decoder", false)) c.fail("is_decoder", "only the bidirectional encoder is supported");
  EsmSpec s;
  EncoderSpec& e = s.encoder;
  e.dtype = dtype;
  e.vocab_size = c.get_int("vocab_size");
  e.hidden_size = c.get_int("hidden_size");
  e.num_hidden_layers = c.get_int("num_hidden_layers");
  e.intermediate_size = c.get_int("intermediate_size");
  e.max_position_embeddings = c.int_or("max_position_embeddings", 1026);
  e.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  e.hidden_act = "gelu";  // EsmIntermediate's gelu (erf), not hidden_act
  const AttentionOptions& a = e.attention =
      encoder_attention(c, e.hidden_size, dtype, {"self.query", "self.key", "self.value", "output.dense"});
  e.placement = NormPlacement::pre;
  e.names.attention_norm = "attention.LayerNorm";
  e.names.ffn_norm = "LayerNorm";
  e.final_norm = "encoder.emb_layer_norm_after";
  e.embeddings_norm = c.bool_or("emb_layer_norm_before", false) ? "layer_norm" : "";
  const std::string positions = c.string_or("position_embedding_type", "absolute");
  if (positions != "absolute" && positions != "rotary")
    c.fail("position_embedding_type", "unsupported '" + positions + "' (absolute, rotary)");
  s.rotary = positions == "rotary";
  if (s.rotary && a.head_dim % 2 != 0) c.fail("num_attention_heads", "the rotated head size must be even");
  if (!s.rotary) {  // RoBERTa's position ids need the padding id
    if (!c.has("pad_token_id")) c.fail("pad_token_id", "absolute position embeddings count from the padding id");
    e.padding_idx = c.get_int("pad_token_id");
  }
  s.token_dropout = c.bool_or("token_dropout", false);
  s.mask_token_id = -1;
  if (s.token_dropout) {
    if (!c.has("mask_token_id")) c.fail("mask_token_id", "token_dropout scales the embeddings by the masked share");
    s.mask_token_id = c.get_int("mask_token_id");
  }
  if (!c.bool_or("tie_word_embeddings", true))
    c.fail("tie_word_embeddings", "an untied masked-LM decoder (without a bias of its own) is not supported");
  e.heads = TextHeadLayout{"esm", "EsmModel",
                           {"lm_head.dense", "gelu", "lm_head.layer_norm", "lm_head.decoder", "lm_head.bias",
                            e.layer_norm_eps},
                           {"classifier.dense", "tanh", "classifier.out_proj"}, {},
                           {"question-answering", "multiple-choice"}};
  return std::make_unique<EsmModel>(s);
}

}  // namespace mobius
