// PegasusXForConditionalGeneration (transformers/models/pegasus_x/modeling_pegasus_x.py,
// configuration_pegasus_x.py) under text2text-generation (tasks/text2text_generation.h).
//   embeddings : model.shared(input_ids) * embed_scale (sqrt(d_model) with scale_embedding) +
//                PegasusXSinusoidalPositionalEmbedding (computed, positions 0.. in the encoder
//                whatever the padding, past.. in the decoder; blocks/sinusoidal_position.h);
//                encoder.embed_tokens, decoder.embed_tokens and lm_head are model.shared with
//                tie_word_embeddings (default), else their own keys
//   encoder    : num_global_tokens learned global tokens (encoder.embed_global) next to the
//                tokens. Each PegasusXEncoderLayer (pre-norm): the tokens through
//                self_attn_layer_norm, the globals through global_self_attn_layer_norm, then
//                PegasusXGlobalLocalAttention (q/k/v/out_proj without biases, scaled by
//                head_dim**-0.5): a global attends to every global and every token, a token to
//                every global and the tokens of its own block of block_size; residual; then the
//                same final_layer_norm, fc1, act, fc2 (with biases) on tokens and globals;
//                residual. Odd layers with stagger_local_blocks shift the blocks by
//                block_size / 2 (pad_local_tokens). Final layer_norm on the tokens; the globals
//                are dropped.
//   decoder    : the pre-norm BART-family layers (blocks/seq2seq_layer.h) without attention
//                biases, final layer_norm, lm_head (no bias, no final_logits_bias).
// Built as one attention over [globals | tokens] under a mask that allows exactly those pairs
// (blocks/attention.h additive_mask): transformers pads the tokens to a multiple of block_size
// (and by block_size / 2 each side when staggered) with masked keys only, and no query ever has
// every key masked (the globals are never masked), so the masked keys contribute exactly 0.
#include <cmath>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/seq2seq_layer.h"
#include "blocks/sinusoidal_position.h"
#include "registry/config_defaults.h"
#include "tasks/text2text_generation.h"
#include "util/error.h"

namespace mobius {
namespace {

struct PegasusXSpec {
  int64_t vocab_size, d_model, encoder_layers, decoder_layers;
  int64_t num_global_tokens, block_size;
  bool stagger_local_blocks;
  float embed_scale;
  bool tied;
  Seq2SeqLayerOptions encoder, decoder;
  DataType dtype;
};

PegasusXSpec pegasus_x_spec(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_attribute_map(config, {{"hidden_size", "d_model"},
                                                 {"num_attention_heads", "encoder_attention_heads"},
                                                 {"num_hidden_layers", "encoder_layers"}});
  PegasusXSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.d_model = c.int_or("d_model", 1024);
  if (s.d_model % 2 != 0 || s.d_model < 4)
    c.fail("d_model", "must be even and at least 4 (PegasusXSinusoidalPositionalEmbedding's halves)");
  s.encoder_layers = c.int_or("encoder_layers", 16);
  s.decoder_layers = c.int_or("decoder_layers", 16);
  if (s.decoder_layers < 1) c.fail("decoder_layers", "must be at least 1");
  s.num_global_tokens = c.int_or("num_global_tokens", 32);
  if (s.num_global_tokens < 1) c.fail("num_global_tokens", "must be at least 1");
  s.block_size = c.int_or("block_size", 512);
  if (s.block_size < 1) c.fail("block_size", "must be at least 1");
  s.stagger_local_blocks = c.bool_or("stagger_local_blocks", true);
  if (s.stagger_local_blocks && s.block_size % 2 != 0)
    c.fail("block_size", "must be even with stagger_local_blocks (the blocks shift by block_size / 2)");
  s.embed_scale = c.bool_or("scale_embedding", true) ? static_cast<float>(std::sqrt(static_cast<double>(s.d_model))) : 1.0f;
  s.tied = c.bool_or("tie_word_embeddings", true);
  const std::string act = c.string_or("activation_function", "gelu");
  if (!is_known_activation(act)) c.fail("activation_function", "unsupported activation '" + act + "'");
  auto side = [&](const char* heads_field, int64_t num_heads, int64_t ffn_dim) {
    if (num_heads <= 0 || s.d_model % num_heads != 0) c.fail(heads_field, "must divide d_model");
    return Seq2SeqLayerOptions{.d_model = s.d_model, .num_heads = num_heads, .ffn_dim = ffn_dim,
                               .activation_function = act, .placement = NormPlacement::pre,
                               .attention_bias = false, .dtype = dtype};
  };
  s.encoder = side("encoder_attention_heads", c.int_or("encoder_attention_heads", 16), c.int_or("encoder_ffn_dim", 4096));
  s.decoder = side("decoder_attention_heads", c.int_or("decoder_attention_heads", 16), c.int_or("decoder_ffn_dim", 4096));
  return s;
}

// The additive mask of the encoder's attention over [globals | tokens]: [batch, 1, G + seq, G + seq].
// A token at i is in block (i + shift) / block_size; shift = block_size / 2 when staggered.
Value* global_local_mask(Ops& op, Value* attention_mask, int64_t num_globals, int64_t block_size, int64_t shift,
                         DataType dtype) {
  auto sc = op.builder().scope("global_local_mask");
  GraphBuilder& b = op.builder();
  Value* batch = op.Shape(attention_mask, {.start = 0, .end = 1});
  Value* seq = op.Squeeze(op.Shape(attention_mask, {.start = 1, .end = 2}), {0});
  // block of each position of [globals | tokens]; the globals -1
  Value* pos = op.Range(b.scalar_i64(0), seq, b.scalar_i64(1));
  Value* block = op.Div(op.Add(pos, static_cast<double>(shift)), static_cast<double>(block_size));
  block = op.Concat({b.constant_i64(std::vector<int64_t>(static_cast<size_t>(num_globals), -1), {num_globals}), block},
                    {.axis = 0});
  Value* is_global = op.Less(block, 0);
  Value* query_global = op.Unsqueeze(is_global, {1});  // [G + seq, 1]
  Value* key_global = op.Unsqueeze(is_global, {0});    // [1, G + seq]
  Value* same_block = op.Equal(op.Unsqueeze(block, {1}), op.Unsqueeze(block, {0}));
  Value* pair = op.Or(op.Or(query_global, key_global), same_block);  // [G + seq, G + seq]
  Value* globals = op.Expand(b.constant_i64({1}, {1, 1}), op.Concat({batch, b.ints({num_globals})}, {.axis = 0}));
  Value* key = op.Cast(op.Concat({globals, attention_mask}, {.axis = 1}), {.to = DataType::BOOL});  // [batch, G + seq]
  return additive_mask(op, op.And(op.Unsqueeze(pair, {0, 1}), op.Unsqueeze(key, {1, 2})), dtype);
}

// PegasusXEncoderLayer on x = [globals | tokens] [batch, G + seq, d_model].
class PegasusXEncoderLayer : public Module {
 public:
  PegasusXEncoderLayer(const PegasusXSpec& s, int64_t num_globals) : num_globals_(num_globals) {
    const Seq2SeqLayerOptions& o = s.encoder;
    AttentionOptions a;
    a.hidden_size = o.d_model;
    a.num_attention_heads = a.num_key_value_heads = o.num_heads;
    a.head_dim = o.d_model / o.num_heads;
    a.dtype = o.dtype;
    a.names.o_proj = "out_proj";
    self_attn = child<Attention>("self_attn", a);
    const NormOptions norm{.dim = o.d_model, .eps = 1e-5f, .dtype = o.dtype, .kind = NormKind::LayerNorm};
    self_attn_layer_norm = adopt("self_attn_layer_norm", make_norm(norm));
    global_self_attn_layer_norm = adopt("global_self_attn_layer_norm", make_norm(norm));
    ffn = adopt("", make_mlp({.hidden_size = o.d_model, .intermediate_size = o.ffn_dim,
                              .hidden_act = o.activation_function, .bias = true, .dtype = o.dtype, .gated = false}));
    final_layer_norm = adopt("final_layer_norm", make_norm(norm));
  }
  // mask: global_local_mask().
  Value* forward(Ops& op, Value* x, Value* mask) const {
    auto sc = enter(op);
    GraphBuilder& b = op.builder();
    Value* globals = op.Slice(x, b.ints({0}), b.ints({num_globals_}), b.ints({1}));
    Value* tokens = op.Slice(x, b.ints({num_globals_}), op.Shape(x, {.start = 1, .end = 2}), b.ints({1}));
    Value* h = op.Concat({global_self_attn_layer_norm->forward(op, globals), self_attn_layer_norm->forward(op, tokens)},
                         {.axis = 1});
    x = op.Add(x, self_attn->forward(op, h, {.mask = mask}, nullptr, nullptr).hidden);
    return op.Add(x, ffn->forward(op, final_layer_norm->forward(op, x)));
  }

  Attention* self_attn;
  Norm *self_attn_layer_norm, *global_self_attn_layer_norm, *final_layer_norm;
  FeedForward* ffn;  // fc1, fc2

 private:
  int64_t num_globals_;
};

class PegasusXForConditionalGeneration : public Seq2SeqLM {
 public:
  explicit PegasusXForConditionalGeneration(const PegasusXSpec& s) : s_(s) {
    const NormOptions norm{.dim = s.d_model, .eps = 1e-5f, .dtype = s.dtype, .kind = NormKind::LayerNorm};
    encoder_embed = child<Embedding>("model.encoder.embed_tokens", s.vocab_size, s.d_model, s.dtype);
    decoder_embed = child<Embedding>("model.decoder.embed_tokens", s.vocab_size, s.d_model, s.dtype);
    if (s.tied) encoder_embed->weight->source_key = decoder_embed->weight->source_key = "model.shared.weight";
    embed_global = child<Embedding>("model.encoder.embed_global", s.num_global_tokens, s.d_model, s.dtype);
    for (int64_t i = 0; i < s.encoder_layers; ++i)
      encoder_layers.push_back(
          child<PegasusXEncoderLayer>("model.encoder.layers." + std::to_string(i), s, s.num_global_tokens));
    encoder_norm = adopt("model.encoder.layer_norm", make_norm(norm));
    for (int64_t i = 0; i < s.decoder_layers; ++i)
      decoder_layers.push_back(child<Seq2SeqDecoderLayer>("model.decoder.layers." + std::to_string(i), s.decoder));
    decoder_norm = adopt("model.decoder.layer_norm", make_norm(norm));
    lm_head = child<LMHead>("lm_head", LMHeadOptions{s.d_model, s.vocab_size, false, s.dtype},
                            s.tied ? decoder_embed : nullptr);
  }

  DataType dtype() const override { return s_.dtype; }
  int64_t hidden_size() const override { return s_.d_model; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  std::vector<LayerStates> decoder_states() const override {
    return self_and_cross_states(s_.decoder_layers, s_.decoder.num_heads, s_.d_model / s_.decoder.num_heads);
  }

  Value* encode(Ops& op, Value* input_ids, Value* attention_mask) const override {
    GraphBuilder& b = op.builder();
    Value* tokens = embed(op, encoder_embed, input_ids, b.ints({0}));
    Value* batch = op.Shape(input_ids, {.start = 0, .end = 1});
    Value* globals = op.Expand(op.Unsqueeze(embed_global->weight->value(op), {0}),
                               op.Concat({batch, b.ints({s_.num_global_tokens, s_.d_model})}, {.axis = 0}));
    Value* x = op.Concat({globals, tokens}, {.axis = 1});
    const int64_t g = s_.num_global_tokens, bs = s_.block_size;
    Value* aligned = global_local_mask(op, attention_mask, g, bs, 0, s_.dtype);
    Value* staggered = s_.stagger_local_blocks ? global_local_mask(op, attention_mask, g, bs, bs / 2, s_.dtype) : nullptr;
    for (size_t i = 0; i < encoder_layers.size(); ++i)  // PegasusXEncoder: stagger_blocks_this_layer
      x = encoder_layers[i]->forward(op, x, i % 2 == 1 && staggered ? staggered : aligned);
    Value* h = op.Slice(x, b.ints({g}), op.Shape(x, {.start = 1, .end = 2}), b.ints({1}));
    return encoder_norm->forward(op, h);
  }

  Seq2SeqDecoderOutputs decode(Ops& op, const Seq2SeqDecoderInputs& in) const override {
    Seq2SeqDecoderOutputs out;
    Seq2SeqStepMasks step = seq2seq_step_masks(op, in, s_.dtype);
    Value* h = embed(op, decoder_embed, in.input_ids, step.past_length);
    h = run_decoder_layers(op, h, decoder_layers, step.self_mask, step.cross_mask, in, out);
    out.logits = lm_head->forward(op, decoder_norm->forward(op, h));
    return out;
  }

  Embedding *encoder_embed, *decoder_embed, *embed_global;
  std::vector<PegasusXEncoderLayer*> encoder_layers;
  std::vector<Seq2SeqDecoderLayer*> decoder_layers;
  Norm *encoder_norm, *decoder_norm;
  LMHead* lm_head;

 private:
  // embed_tokens(input_ids) * embed_scale + the sinusoidal positions past, past + 1, ...
  Value* embed(Ops& op, const Embedding* table, Value* input_ids, Value* past) const {
    Value* h = table->forward(op, input_ids);
    if (s_.embed_scale != 1.0f) h = op.Mul(h, s_.embed_scale);
    Value* start = op.Squeeze(past, {0});
    Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
    Value* ids = op.Unsqueeze(op.Range(start, op.Add(start, seq), op.builder().scalar_i64(1)), {0});
    return op.Add(h, sinusoidal_positions_computed(op, ids, s_.d_model, s_.dtype));
  }

  PegasusXSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_pegasus_x(const HfConfig& c, DataType dtype) {
  return std::make_unique<PegasusXForConditionalGeneration>(pegasus_x_spec(c, dtype));
}

}  // namespace mobius
