// BART-family encoder-decoders under text2text-generation (tasks/text2text_generation.h), one
// stack of blocks/seq2seq_layer.h layers each side under `model.`:
//   bart   BartForConditionalGeneration (transformers/models/bart/modeling_bart.py,
//          configuration_bart.py): post-norm layers, layernorm_embedding, no final norms
//   mbart  MBartForConditionalGeneration (models/mbart): pre-norm layers, layernorm_embedding,
//          encoder.layer_norm / decoder.layer_norm after the stacks
//   plbart PLBartForConditionalGeneration (models/plbart): as bart
// All: embeddings = embed_tokens(input_ids) * embed_scale (sqrt(d_model) with scale_embedding,
// else 1) + embed_positions(positions + 2) (learned table of max_position_embeddings + 2 rows;
// positions 0.. in the encoder whatever the padding, past.. in the decoder); LM head, plus the
// final_logits_bias buffer [1, vocab_size]. tie_word_embeddings (default true) ties
// model.encoder.embed_tokens, model.decoder.embed_tokens and lm_head to model.shared; without it
// transformers 5 reads all three from their own keys (and model.shared is unused). Fields: d_model, encoder_/decoder_layers,
// encoder_/decoder_attention_heads, encoder_/decoder_ffn_dim, activation_function,
// max_position_embeddings, scale_embedding; LayerNorm eps 1e-5 (nn.LayerNorm's default).
#include <cmath>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/position_embedding.h"
#include "blocks/seq2seq_layer.h"
#include "tasks/text2text_generation.h"
#include "util/error.h"

namespace mobius {
namespace {

struct BartSpec {
  int64_t vocab_size, d_model, max_position_embeddings;
  Seq2SeqLayerOptions encoder, decoder;
  int64_t encoder_layers, decoder_layers;
  float embed_scale;
  bool layernorm_embedding;  // LayerNorm after the embeddings (bart, mbart, plbart)
  bool final_layer_norm;     // encoder.layer_norm / decoder.layer_norm (mbart)
  bool tied;                 // LM head = model.shared
  DataType dtype;
};

// The layout of a family member (the list at the top of this file).
struct BartLayout {
  NormPlacement placement;
  bool layernorm_embedding;
  bool final_layer_norm;
};

BartSpec bart_spec(const HfConfig& c, DataType dtype, const BartLayout& l) {
  BartSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.d_model = c.int_or("d_model", 1024);
  s.max_position_embeddings = c.int_or("max_position_embeddings", 1024);
  s.encoder_layers = c.int_or("encoder_layers", 12);
  s.decoder_layers = c.int_or("decoder_layers", 12);
  if (s.decoder_layers < 1) c.fail("decoder_layers", "must be at least 1");
  const std::string act = c.string_or("activation_function", "gelu");
  if (!is_known_activation(act)) c.fail("activation_function", "unsupported activation '" + act + "'");
  auto side = [&](const char* heads_field, const char* ffn_field) {
    Seq2SeqLayerOptions o{.d_model = s.d_model, .num_heads = c.int_or(heads_field, 16),
                          .ffn_dim = c.int_or(ffn_field, 4096), .activation_function = act,
                          .placement = l.placement, .dtype = dtype};
    if (o.num_heads <= 0 || s.d_model % o.num_heads != 0) c.fail(heads_field, "must divide d_model");
    return o;
  };
  s.encoder = side("encoder_attention_heads", "encoder_ffn_dim");
  s.decoder = side("decoder_attention_heads", "decoder_ffn_dim");
  s.embed_scale = c.bool_or("scale_embedding", false) ? static_cast<float>(std::sqrt(static_cast<double>(s.d_model))) : 1.0f;
  s.layernorm_embedding = l.layernorm_embedding;
  s.final_layer_norm = l.final_layer_norm;
  s.tied = c.bool_or("tie_word_embeddings", true);
  return s;
}

// BartEncoder / BartDecoder without their layers: the embeddings and the norms around them.
class BartStack : public Module {
 public:
  explicit BartStack(const BartSpec& s) : s_(s) {
    embed_tokens = child<Embedding>("embed_tokens", s.vocab_size, s.d_model, s.dtype);
    if (s.tied) embed_tokens->weight->source_key = "model.shared.weight";
    embed_positions =
        child<LearnedPositionEmbedding>("embed_positions", s.max_position_embeddings + 2, s.d_model, 2, s.dtype);
    const NormOptions norm{.dim = s.d_model, .eps = 1e-5f, .dtype = s.dtype, .kind = NormKind::LayerNorm};
    if (s.layernorm_embedding) layernorm_embedding = adopt("layernorm_embedding", make_norm(norm));
    if (s.final_layer_norm) layer_norm = adopt("layer_norm", make_norm(norm));
  }
  // input_ids [batch, seq]; past: int64 [1], the position of the first token.
  Value* embed(Ops& op, Value* input_ids, Value* past) const {
    auto sc = enter(op);
    Value* h = embed_tokens->forward(op, input_ids);
    if (s_.embed_scale != 1.0f) h = op.Mul(h, s_.embed_scale);
    Value* start = op.Squeeze(past, {0});
    Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
    Value* positions = op.Unsqueeze(op.Range(start, op.Add(start, seq), op.builder().scalar_i64(1)), {0});
    h = op.Add(h, embed_positions->forward(op, positions));
    return layernorm_embedding ? layernorm_embedding->forward(op, h) : h;
  }
  Value* finish(Ops& op, Value* h) const {
    auto sc = enter(op);
    return layer_norm ? layer_norm->forward(op, h) : h;
  }

  Embedding* embed_tokens;
  LearnedPositionEmbedding* embed_positions;
  Norm *layernorm_embedding = nullptr, *layer_norm = nullptr;

 private:
  const BartSpec& s_;
};

class BartForConditionalGeneration : public Seq2SeqLM {
 public:
  explicit BartForConditionalGeneration(const BartSpec& s) : s_(s) {
    encoder = child<BartStack>("model.encoder", s_);
    decoder = child<BartStack>("model.decoder", s_);
    for (int64_t i = 0; i < s.encoder_layers; ++i)
      encoder_layers.push_back(child<Seq2SeqEncoderLayer>("model.encoder.layers." + std::to_string(i), s.encoder));
    for (int64_t i = 0; i < s.decoder_layers; ++i)
      decoder_layers.push_back(child<Seq2SeqDecoderLayer>("model.decoder.layers." + std::to_string(i), s.decoder));
    lm_head = child<LMHead>("lm_head", LMHeadOptions{s.d_model, s.vocab_size, false, s.dtype},
                            s.tied ? decoder->embed_tokens : nullptr);
    final_logits_bias = param("final_logits_bias", {1, s.vocab_size}, s.dtype);
  }

  DataType dtype() const override { return s_.dtype; }
  int64_t hidden_size() const override { return s_.d_model; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  std::vector<LayerStates> decoder_states() const override {
    const int64_t heads = s_.decoder.num_heads, dim = s_.d_model / heads;
    const LayerStates one = {{StateKind::self_kv, heads, dim}, {StateKind::cross_kv, heads, dim}};
    return std::vector<LayerStates>(static_cast<size_t>(s_.decoder_layers), one);
  }

  Value* encode(Ops& op, Value* input_ids, Value* attention_mask) const override {
    Value* h = encoder->embed(op, input_ids, op.builder().ints({0}));
    Value* mask = padding_mask(op, attention_mask, s_.dtype);
    for (const Seq2SeqEncoderLayer* l : encoder_layers) h = l->forward(op, h, mask);
    return encoder->finish(op, h);
  }

  Seq2SeqDecoderOutputs decode(Ops& op, const Seq2SeqDecoderInputs& in) const override {
    Seq2SeqDecoderOutputs out;
    Value* past = op.Shape(in.past[0][0].key, {.start = 2, .end = 3});
    Value* h = decoder->embed(op, in.input_ids, past);
    Value* self_mask = decoder_causal_mask(op, in.input_ids, past, s_.dtype);
    Value* cross_mask = cross_attention_mask(op, in.encoder_attention_mask, in.input_ids, s_.dtype);
    for (size_t i = 0; i < decoder_layers.size(); ++i) {
      auto [y, present] = decoder_layers[i]->forward(op, h, self_mask, in.encoder_hidden_states, cross_mask, in.past[i]);
      h = y;
      out.present.push_back(std::move(present));
    }
    h = decoder->finish(op, h);
    out.logits = op.Add(lm_head->forward(op, h), final_logits_bias->value(op));
    return out;
  }

  BartStack *encoder, *decoder;
  std::vector<Seq2SeqEncoderLayer*> encoder_layers;
  std::vector<Seq2SeqDecoderLayer*> decoder_layers;
  LMHead* lm_head;
  Parameter* final_logits_bias;

 private:
  BartSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_bart(const HfConfig& c, DataType dtype) {
  return std::make_unique<BartForConditionalGeneration>(bart_spec(c, dtype, {NormPlacement::post, true, false}));
}

std::unique_ptr<Architecture> create_mbart(const HfConfig& c, DataType dtype) {
  return std::make_unique<BartForConditionalGeneration>(bart_spec(c, dtype, {NormPlacement::pre, true, true}));
}

std::unique_ptr<Architecture> create_plbart(const HfConfig& c, DataType dtype) {
  return std::make_unique<BartForConditionalGeneration>(bart_spec(c, dtype, {NormPlacement::post, true, false}));
}

}  // namespace mobius
