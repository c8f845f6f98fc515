// BART-family encoder-decoders under text2text-generation (tasks/text2text_generation.h), one
// stack of blocks/seq2seq_layer.h layers each side under `model.`. The members differ in where
// the LayerNorms sit, their position embeddings and the norms around the stacks
// (transformers/models/<type>/modeling_<type>.py, <Type>Encoder / <Type>Decoder):
//   type              layers  positions                       embedding norm      final norms
//   bart              post    learned, offset 2               after positions     -
//   mbart             pre     learned, offset 2               after positions     layer_norm
//   plbart            post    learned, offset 2               after positions     -
//   marian            post    sinusoidal (computed)           -                   -
//   pegasus           pre     sinusoidal (in the checkpoint)  -                   layer_norm
//   blenderbot        pre     learned                         -                   layer_norm
//   blenderbot-small  post    learned                         encoder: after positions;
//                                                             decoder: on the tokens, before
//   m2m_100           pre     sinusoidal t2t, from padding    -                   layer_norm
//   bigbird_pegasus   pre     learned                         -                   layernorm_embedding
//   led               post    learned (encoder and decoder    after positions     -
//                             sizes of their own)
//   fsmt              post    fairseq table, from padding     -                   -
// bigbird_pegasus (BigBirdPegasusForConditionalGeneration): attention biases only with use_bias
// (fc1/fc2 and the norms always have theirs); the encoder's self_attn is self.query/key/value +
// output. Its attention_type "original_full" is what is built. "block_sparse" (the checkpoints'
// setting) is refused: transformers itself runs it as original_full for encoder inputs of up to
// (5 + 2 * num_random_blocks) * block_size tokens, but past that its block-sparse pattern (with
// random blocks) is not modeled; set attention_type "original_full" in config.json to build a
// full-attention model (equal to transformers' up to that length).
// led (LEDForConditionalGeneration, under `led.`): the encoder's self_attn is Longformer's local
// attention (LEDEncoderSelfAttention / longformer_self_attn query, key, value + output): query i
// attends to the tokens j with |i - j| <= attention_window[layer] / 2 (attention_window: an int
// or one per layer); the global attention of a global_attention_mask (query_global, key_global,
// value_global) is not modeled: the encoder graph has no such input, as LEDForConditionalGeneration
// .generate without one. Its padding of the input to a multiple of the window adds only masked keys.
// fsmt (FSMTForConditionalGeneration, models/fsmt): the encoder embeds src_vocab_size tokens, the
// decoder tgt_vocab_size (= vocab_size, its attribute_map), both scaled; the LM head is
// model.decoder.output_projection (tied to model.decoder.embed_tokens with tie_word_embeddings,
// default false; no model.shared, no final_logits_bias). Positions: SinusoidalPositionalEmbedding's
// table as the checkpoint holds it (max_position_embeddings + pad_token_id + 1 rows), at fairseq's
// make_positions: pad_token_id + the count of non-padding tokens so far, + past in the decoder.
// All: embeddings = embed_tokens(input_ids) * embed_scale (sqrt(d_model) with scale_embedding,
// else 1; BlenderbotSmallDecoder never scales) + positions (0.. in the encoder whatever the
// padding, past.. in the decoder; m2m_100: pad_token_id + the count of non-padding tokens so far
// (past + cumsum), pad_token_id at padding, M2M100SinusoidalPositionalEmbedding's table of
// max_position_embeddings + 2 rows); LM head, plus the final_logits_bias buffer [1, vocab_size]
// (not m2m_100).
// tie_word_embeddings (default true) ties model.encoder.embed_tokens, model.decoder.embed_tokens
// and lm_head to model.shared; without it transformers 5 reads all three from their own keys (and
// model.shared is unused). Fields: d_model, encoder_/decoder_layers,
// encoder_/decoder_attention_heads, encoder_/decoder_ffn_dim, activation_function,
// max_position_embeddings, scale_embedding; LayerNorm eps 1e-5 (nn.LayerNorm's default).
// marian: share_encoder_decoder_embeddings (the default: model.shared, decoder_vocab_size unset or
// equal to vocab_size), or false: separate source and target vocabularies, no model.shared, the
// encoder embeds vocab_size tokens, the decoder decoder_vocab_size (its embed_tokens, the LM
// head, tied to model.decoder.embed_tokens with tie_word_embeddings, and final_logits_bias).
#include <cmath>
#include <vector>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/local_attention_mask.h"
#include "blocks/position_embedding.h"
#include "blocks/sinusoidal_position.h"
#include "blocks/seq2seq_layer.h"
#include "registry/config_defaults.h"
#include "tasks/text2text_generation.h"
#include "util/error.h"

namespace mobius {
namespace {

enum class Positions { learned_offset_2, learned, sinusoidal, sinusoidal_t2t_from_padding, table_from_padding };
enum class EmbeddingNorm { none, after_positions, before_positions };

// The layout of a family member (the table at the top of this file).
struct BartLayout {
  NormPlacement placement;
  Positions positions;
  EmbeddingNorm encoder_norm, decoder_norm;
  bool final_layer_norm;
  bool decoder_scaled = true;  // BlenderbotSmallDecoder never applies embed_scale
  bool final_logits_bias = true;
  std::string prefix = "model";            // led: "led"
  std::string final_norm = "layer_norm";   // bigbird_pegasus: "layernorm_embedding"
  bool shared = true;                      // tied embed_tokens read <prefix>.shared (fsmt: no shared)
  std::string lm_head = "lm_head";         // fsmt: "model.decoder.output_projection"
};

// One stack's embeddings.
struct StackEmbedding {
  Positions positions;
  EmbeddingNorm norm;
  float scale;
  bool final_layer_norm;
  int64_t max_positions;  // rows of the learned table; sinusoidal: its size (m2m_100: + 2)
  int64_t vocab_size;     // embed_tokens rows (fsmt's encoder: src_vocab_size)
};

struct BartSpec {
  int64_t vocab_size, d_model, max_position_embeddings;
  Seq2SeqLayerOptions encoder, decoder;
  int64_t encoder_layers, decoder_layers;
  StackEmbedding encoder_embedding, decoder_embedding;
  bool tied;  // LM head and both embed_tokens = model.shared
  bool final_logits_bias;
  int64_t pad_token_id;  // Positions::sinusoidal_t2t_from_padding
  std::string prefix, final_norm, lm_head;
  bool shared;
  std::vector<int64_t> encoder_windows;  // led: attention_window per encoder layer; empty: full attention
  DataType dtype;
};

// The config fields as the <Type>Config classes read them (configuration_<type>.py): their
// attribute_map aliases win over the fields (hidden_size sets d_model, num_attention_heads
// encoder_attention_heads, num_hidden_layers encoder_layers); the class defaults of fields
// config.json leaves out are filled in before (registry/config_defaults.h: e.g. PLBartConfig's
// scale_embedding true, M2M100Config's activation_function relu), so the fallbacks here only serve
// a config without a class row.
BartSpec bart_spec(const HfConfig& config, DataType dtype, const BartLayout& l) {
  const HfConfig c = with_attribute_map(config, {{"hidden_size", "d_model"},
                                                 {"num_attention_heads", "encoder_attention_heads"},
                                                 {"num_hidden_layers", "encoder_layers"}});
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
  auto side = [&](const char* heads_field, int64_t num_heads, int64_t ffn_dim) {
    Seq2SeqLayerOptions o{.d_model = s.d_model, .num_heads = num_heads, .ffn_dim = ffn_dim,
                          .activation_function = act, .placement = l.placement, .dtype = dtype};
    if (o.num_heads <= 0 || s.d_model % o.num_heads != 0) c.fail(heads_field, "must divide d_model");
    return o;
  };
  s.encoder = side("encoder_attention_heads", c.int_or("encoder_attention_heads", 16), c.int_or("encoder_ffn_dim", 4096));
  s.decoder = side("decoder_attention_heads", c.int_or("decoder_attention_heads", 16), c.int_or("decoder_ffn_dim", 4096));
  const float scale = c.bool_or("scale_embedding", false) ? static_cast<float>(std::sqrt(static_cast<double>(s.d_model))) : 1.0f;
  s.encoder_embedding = {l.positions, l.encoder_norm, scale, l.final_layer_norm, s.max_position_embeddings,
                         s.vocab_size};
  s.decoder_embedding = {l.positions, l.decoder_norm, l.decoder_scaled ? scale : 1.0f, l.final_layer_norm,
                         s.max_position_embeddings, s.vocab_size};
  s.prefix = l.prefix;
  s.final_norm = l.final_norm;
  s.shared = l.shared;
  s.lm_head = l.lm_head;
  s.tied = c.bool_or("tie_word_embeddings", true);
  s.final_logits_bias = l.final_logits_bias;
  const bool from_padding =
      l.positions == Positions::sinusoidal_t2t_from_padding || l.positions == Positions::table_from_padding;
  s.pad_token_id = from_padding ? c.int_or("pad_token_id", 1) : 0;
  return s;
}

// BartEncoder / BartDecoder without their layers: the embeddings and the norms around them.
class BartStack : public Module {
 public:
  BartStack(const BartSpec& s, const StackEmbedding& e) : s_(s), e_(e) {
    embed_tokens = child<Embedding>("embed_tokens", e.vocab_size, s.d_model, s.dtype);
    if (s.tied && s.shared) embed_tokens->weight->source_key = s.prefix + ".shared.weight";
    if (e.positions == Positions::learned_offset_2 || e.positions == Positions::learned ||
        e.positions == Positions::table_from_padding) {
      const int64_t offset = e.positions == Positions::learned_offset_2 ? 2 : 0;
      embed_positions = child<LearnedPositionEmbedding>("embed_positions", e.max_positions + offset,
                                                        s.d_model, offset, s.dtype);
    }
    const NormOptions norm{.dim = s.d_model, .eps = 1e-5f, .dtype = s.dtype, .kind = NormKind::LayerNorm};
    if (e.norm != EmbeddingNorm::none) layernorm_embedding = adopt("layernorm_embedding", make_norm(norm));
    if (e.final_layer_norm) layer_norm = adopt(s.final_norm, make_norm(norm));
  }
  // input_ids [batch, seq]; past: int64 [1], the position of the first token.
  Value* embed(Ops& op, Value* input_ids, Value* past) const {
    auto sc = enter(op);
    Value* h = embed_tokens->forward(op, input_ids);
    if (e_.scale != 1.0f) h = op.Mul(h, e_.scale);
    if (e_.norm == EmbeddingNorm::before_positions) h = layernorm_embedding->forward(op, h);
    h = op.Add(h, positions(op, input_ids, past));
    return e_.norm == EmbeddingNorm::after_positions ? layernorm_embedding->forward(op, h) : h;
  }
  // The position embeddings [1 or batch, seq, d_model].
  Value* positions(Ops& op, Value* input_ids, Value* past) const {
    if (e_.positions == Positions::table_from_padding) {  // FSMT's make_positions(input) + past
      Value* mask = op.Cast(op.Not(op.Equal(input_ids, static_cast<double>(s_.pad_token_id))), {.to = DataType::INT64});
      Value* count = op.Mul(op.CumSum(mask, op.builder().scalar_i64(1)), mask);
      return embed_positions->forward(op, op.Add(op.Add(count, static_cast<double>(s_.pad_token_id)), past));
    }
    if (e_.positions == Positions::sinusoidal_t2t_from_padding) {  // create_position_ids_from_input_ids
      Value* mask = op.Cast(op.Not(op.Equal(input_ids, static_cast<double>(s_.pad_token_id))), {.to = DataType::INT64});
      Value* count = op.Mul(op.Add(op.CumSum(mask, op.builder().scalar_i64(1)), past), mask);
      return sinusoidal_positions_t2t(op, op.Add(count, static_cast<double>(s_.pad_token_id)),
                                      e_.max_positions + 2, s_.d_model, s_.pad_token_id, s_.dtype);
    }
    Value* start = op.Squeeze(past, {0});
    Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
    Value* ids = op.Unsqueeze(op.Range(start, op.Add(start, seq), op.builder().scalar_i64(1)), {0});
    if (e_.positions == Positions::sinusoidal)
      return sinusoidal_positions(op, ids, e_.max_positions, s_.d_model, s_.dtype);
    return embed_positions->forward(op, ids);
  }
  Value* finish(Ops& op, Value* h) const {
    auto sc = enter(op);
    return layer_norm ? layer_norm->forward(op, h) : h;
  }

  Embedding* embed_tokens;
  LearnedPositionEmbedding* embed_positions = nullptr;  // null: sinusoidal
  Norm *layernorm_embedding = nullptr, *layer_norm = nullptr;  // layer_norm: the final norm (BartLayout::final_norm)

 private:
  const BartSpec& s_;
  StackEmbedding e_;
};

class BartForConditionalGeneration : public Seq2SeqLM {
 public:
  explicit BartForConditionalGeneration(const BartSpec& s) : s_(s) {
    encoder = child<BartStack>(s.prefix + ".encoder", s_, s_.encoder_embedding);
    decoder = child<BartStack>(s.prefix + ".decoder", s_, s_.decoder_embedding);
    for (int64_t i = 0; i < s.encoder_layers; ++i)
      encoder_layers.push_back(child<Seq2SeqEncoderLayer>(s.prefix + ".encoder.layers." + std::to_string(i), s.encoder));
    for (int64_t i = 0; i < s.decoder_layers; ++i)
      decoder_layers.push_back(child<Seq2SeqDecoderLayer>(s.prefix + ".decoder.layers." + std::to_string(i), s.decoder));
    lm_head = child<LMHead>(s.lm_head, LMHeadOptions{s.d_model, s.vocab_size, false, s.dtype},
                            s.tied ? decoder->embed_tokens : nullptr);
    if (s.final_logits_bias) final_logits_bias = param("final_logits_bias", {1, s.vocab_size}, s.dtype);
  }

  DataType dtype() const override { return s_.dtype; }
  int64_t hidden_size() const override { return s_.d_model; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  std::vector<LayerStates> decoder_states() const override {
    return self_and_cross_states(s_.decoder_layers, s_.decoder.num_heads, s_.d_model / s_.decoder.num_heads);
  }

  Value* encode(Ops& op, Value* input_ids, Value* attention_mask) const override {
    Value* h = encoder->embed(op, input_ids, op.builder().ints({0}));
    if (s_.encoder_windows.empty()) {
      Value* mask = padding_mask(op, attention_mask, s_.dtype);
      for (const Seq2SeqEncoderLayer* l : encoder_layers) h = l->forward(op, h, mask);
    } else {
      for (size_t i = 0; i < encoder_layers.size(); ++i)
        h = encoder_layers[i]->forward(
            op, h, local_padding_mask(op, attention_mask, s_.encoder_windows[i] / 2, s_.dtype));
    }
    return encoder->finish(op, h);
  }

  Seq2SeqDecoderOutputs decode(Ops& op, const Seq2SeqDecoderInputs& in) const override {
    Seq2SeqDecoderOutputs out;
    Seq2SeqStepMasks step = seq2seq_step_masks(op, in, s_.dtype);
    Value* h = decoder->embed(op, in.input_ids, step.past_length);
    h = run_decoder_layers(op, h, decoder_layers, step.self_mask, step.cross_mask, in, out);
    h = decoder->finish(op, h);
    out.logits = lm_head->forward(op, h);
    if (final_logits_bias) out.logits = op.Add(out.logits, final_logits_bias->value(op));
    return out;
  }

  BartStack *encoder, *decoder;
  std::vector<Seq2SeqEncoderLayer*> encoder_layers;
  std::vector<Seq2SeqDecoderLayer*> decoder_layers;
  LMHead* lm_head;
  Parameter* final_logits_bias = nullptr;

 private:
  BartSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_bigbird_pegasus(const HfConfig& c, DataType dtype) {
  const std::string attention = c.string_or("attention_type", "block_sparse");
  if (attention != "original_full")
    c.fail("attention_type", "'" + attention + "' is not supported (only full attention is built: set \"original_full\", "
                             "which equals transformers' block_sparse for encoder inputs up to (5 + 2 * "
                             "num_random_blocks) * block_size tokens)");
  BartLayout l{NormPlacement::pre, Positions::learned, EmbeddingNorm::none, EmbeddingNorm::none, true};
  l.final_norm = "layernorm_embedding";
  BartSpec s = bart_spec(c, dtype, l);
  s.encoder.attention_bias = s.decoder.attention_bias = c.bool_or("use_bias", false);
  s.encoder.encoder_self_attn_names = {"self.query", "self.key", "self.value", "output"};
  return std::make_unique<BartForConditionalGeneration>(s);
}

std::unique_ptr<Architecture> create_led(const HfConfig& c, DataType dtype) {
  BartLayout l{NormPlacement::post, Positions::learned, EmbeddingNorm::after_positions, EmbeddingNorm::after_positions,
               false};
  l.prefix = "led";
  BartSpec s = bart_spec(c, dtype, l);
  s.encoder_embedding.max_positions = c.int_or("max_encoder_position_embeddings", 16384);
  s.decoder_embedding.max_positions = c.int_or("max_decoder_position_embeddings", 1024);
  s.encoder.encoder_self_attn_names = {"longformer_self_attn.query", "longformer_self_attn.key",
                                       "longformer_self_attn.value", "output"};
  s.encoder_windows = longformer_attention_windows(c, s.encoder_layers);
  return std::make_unique<BartForConditionalGeneration>(s);
}

std::unique_ptr<Architecture> create_fsmt(const HfConfig& config, DataType dtype) {
  // FSMTConfig.attribute_map: vocab_size is tgt_vocab_size (the decoder's and the LM head's)
  const HfConfig aliased = with_attribute_map(config, {{"vocab_size", "tgt_vocab_size"}});
  nlohmann::json j = aliased.json();
  j["vocab_size"] = aliased.get_int("tgt_vocab_size");
  const HfConfig c(std::move(j), config.file());
  BartLayout l{NormPlacement::post, Positions::table_from_padding, EmbeddingNorm::none, EmbeddingNorm::none, false,
               true, /*final_logits_bias=*/false};
  l.shared = false;
  l.lm_head = "model.decoder.output_projection";
  BartSpec s = bart_spec(c, dtype, l);
  s.encoder_embedding.vocab_size = c.int_or("src_vocab_size", 42024);
  const int64_t rows = s.max_position_embeddings + s.pad_token_id + 1;
  if (s.pad_token_id < 0) c.fail("pad_token_id", "must not be negative (the position table's padding row)");
  s.encoder_embedding.max_positions = s.decoder_embedding.max_positions = rows;
  return std::make_unique<BartForConditionalGeneration>(s);
}

std::unique_ptr<Architecture> create_m2m_100(const HfConfig& c, DataType dtype) {
  return std::make_unique<BartForConditionalGeneration>(
      bart_spec(c, dtype, {NormPlacement::pre, Positions::sinusoidal_t2t_from_padding, EmbeddingNorm::none,
                           EmbeddingNorm::none, true, true, /*final_logits_bias=*/false}));
}

std::unique_ptr<Architecture> create_bart(const HfConfig& c, DataType dtype) {
  return std::make_unique<BartForConditionalGeneration>(bart_spec(
      c, dtype, {NormPlacement::post, Positions::learned_offset_2, EmbeddingNorm::after_positions,
                 EmbeddingNorm::after_positions, false}));
}

std::unique_ptr<Architecture> create_mbart(const HfConfig& c, DataType dtype) {
  return std::make_unique<BartForConditionalGeneration>(bart_spec(
      c, dtype, {NormPlacement::pre, Positions::learned_offset_2, EmbeddingNorm::after_positions,
                 EmbeddingNorm::after_positions, true}));
}

std::unique_ptr<Architecture> create_plbart(const HfConfig& c, DataType dtype) {
  return create_bart(c, dtype);
}

std::unique_ptr<Architecture> create_marian(const HfConfig& c, DataType dtype) {
  BartSpec s =
      bart_spec(c, dtype, {NormPlacement::post, Positions::sinusoidal, EmbeddingNorm::none, EmbeddingNorm::none, false});
  // MarianConfig: decoder_vocab_size or vocab_size (absent, null or 0: vocab_size)
  const int64_t given = c.int_or("decoder_vocab_size", 0);
  if (given < 0) c.fail("decoder_vocab_size", "must be positive");
  const int64_t target = given ? given : s.vocab_size;
  if (c.bool_or("share_encoder_decoder_embeddings", true)) {
    if (target != s.vocab_size)
      c.fail("decoder_vocab_size", "must equal vocab_size with share_encoder_decoder_embeddings (one shared table; "
                                   "set share_encoder_decoder_embeddings false for a target vocabulary of its own)");
  } else {
    // MarianMTModel: no model.shared; the decoder's embed_tokens, the LM head (tied to it with
    // tie_word_embeddings) and final_logits_bias have decoder_vocab_size rows
    s.shared = false;
    s.vocab_size = s.decoder_embedding.vocab_size = target;
  }
  return std::make_unique<BartForConditionalGeneration>(s);
}

std::unique_ptr<Architecture> create_pegasus(const HfConfig& c, DataType dtype) {
  return std::make_unique<BartForConditionalGeneration>(
      bart_spec(c, dtype, {NormPlacement::pre, Positions::learned, EmbeddingNorm::none, EmbeddingNorm::none, true}));
}

std::unique_ptr<Architecture> create_blenderbot(const HfConfig& c, DataType dtype) {
  return create_pegasus(c, dtype);
}

std::unique_ptr<Architecture> create_blenderbot_small(const HfConfig& c, DataType dtype) {
  return std::make_unique<BartForConditionalGeneration>(
      bart_spec(c, dtype, {NormPlacement::post, Positions::learned, EmbeddingNorm::after_positions,
                           EmbeddingNorm::before_positions, false, /*decoder_scaled=*/false}));
}

}  // namespace mobius
