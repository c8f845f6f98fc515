// ProphetNetForConditionalGeneration (transformers/models/prophetnet/modeling_prophetnet.py,
// configuration_prophetnet.py; Qi et al., arXiv:2001.04063) under text2text-generation
// (tasks/text2text_generation.h).
//   encoder : word_embeddings + position_embeddings (learned, at pad_token_id + 1, + 2, ... whatever
//             the padding: ProphetNetEncoder passes no mask to them), embeddings_layer_norm; post-norm
//             layers: x = LN(x + self_attn(x)), x = LN(x + feed_forward(x)) (intermediate, act,
//             output); attention q/k/v/out_proj (query_proj, ...) with biases, scaled by
//             head_dim**-0.5; no final norm.
//   decoder : the main stream (the tokens) and `ngram` predict streams run side by side; a stream's
//             position-wise parts (cross_attn, feed_forward, the post-norms) see one stream at a
//             time, and ProphetNetNgramSelfAttention lets the main stream attend to its own keys
//             (cached) and predict stream s to the main keys up to its position plus its own key at
//             that position, never to another stream. The logits generate reads are the FIRST
//             predict stream's (ProphetNetForConditionalGeneration.forward: predict_logits[:, 0]);
//             the main stream's output is never projected. So the decoder graph computes the main
//             stream (its keys/values are the `.decoder` cache) and predict stream 1, whose input is
//             ngram_embeddings[ngram - 1] (transformers indexes ngram_embeddings[s - 1] for s = 0)
//             plus the position embedding of the main position + 1, through embeddings_layer_norm;
//             streams 2.. are not built (nothing reads them).
//   positions: the main stream's token i of a call sits at pad_token_id (0) + past + 1 + i (clamped to
//             max_position_embeddings - 1), as ProphetNetPositionalEmbeddings gives for a prefill
//             (past 0) and for a cached one-token step (transformers accepts only one token per
//             cached call: the decoder asserts it).
//   relative bias: scores + relative_pos_embeddings(hidden of the stream) [buckets x heads] looked
//             up by compute_relative_buckets (causal) of the key-minus-query distance: main key j,
//             query at q = past + i: j - q; predict stream: main key j: j - q - 1, its own key: 0.
//             pad_token_id must be 0: transformers' cached steps count the query from
//             pad_token_id + past + 1 and fail otherwise (get_predict_relative_pos_embeddings
//             checks position_ids == key length - 1), so no other value has a reference.
//             transformers' multi-token prefill pairs the predict stream's table rows, ordered
//             (batch, position, stream, head), with bucket rows ordered (stream, batch, head,
//             position) (get_predict_relative_pos_embeddings), i.e. reads other positions' and
//             streams' biases; a cached step and a one-token prefill (generate's) do not, and the
//             graph computes what they compute at every length.
//   lm_head: prophetnet.word_embeddings with tie_word_embeddings (default), as are the encoder's and
//             decoder's word_embeddings.
#include <cmath>
#include <limits>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/cross_attention.h"
#include "blocks/mlp.h"
#include "registry/config_defaults.h"
#include "tasks/text2text_generation.h"
#include "util/error.h"

namespace mobius {
namespace {

struct ProphetNetSpec {
  int64_t vocab_size, hidden_size, max_position_embeddings, pad_token_id, ngram, num_buckets, relative_max_distance;
  int64_t encoder_layers, decoder_layers, encoder_heads, decoder_heads, encoder_ffn_dim, decoder_ffn_dim;
  std::string act;
  bool tied;
  DataType dtype;

  AttentionOptions attention(int64_t heads) const {
    AttentionOptions a;
    a.hidden_size = hidden_size;
    a.num_attention_heads = a.num_key_value_heads = heads;
    a.head_dim = hidden_size / heads;
    a.qkv_bias = a.o_bias = true;
    a.dtype = dtype;
    a.names = {"query_proj", "key_proj", "value_proj", "out_proj"};
    return a;
  }
  NormOptions norm() const { return {.dim = hidden_size, .eps = 1e-5f, .dtype = dtype, .kind = NormKind::LayerNorm}; }
  MLPOptions feed_forward(int64_t ffn_dim) const {
    MLPOptions m{.hidden_size = hidden_size, .intermediate_size = ffn_dim, .hidden_act = act, .bias = true,
                 .dtype = dtype, .gated = false};
    m.up_name = "feed_forward.intermediate";
    m.down_name = "feed_forward.output";
    return m;
  }
};

ProphetNetSpec prophetnet_spec(const HfConfig& config, DataType dtype) {
  const HfConfig c = with_attribute_map(config, {{"num_attention_heads", "num_encoder_attention_heads"}});
  ProphetNetSpec s;
  s.dtype = dtype;
  s.vocab_size = c.get_int("vocab_size");
  s.hidden_size = c.get_int("hidden_size");  // saved by every ProphetNetConfig
  s.max_position_embeddings = c.int_or("max_position_embeddings", 512);
  s.pad_token_id = c.int_or("pad_token_id", 0);
  if (s.pad_token_id != 0)
    c.fail("pad_token_id", "must be 0: transformers' ProphetNet decoder refuses every cached step otherwise "
                           "(get_predict_relative_pos_embeddings' position_ids check)");
  s.ngram = c.int_or("ngram", 2);
  if (s.ngram < 1) c.fail("ngram", "must be at least 1 (the logits are the first predict stream's)");
  s.num_buckets = c.int_or("num_buckets", 32);
  if (s.num_buckets < 2) c.fail("num_buckets", "must be at least 2");
  s.relative_max_distance = c.int_or("relative_max_distance", 128);
  if (s.relative_max_distance <= s.num_buckets / 2)
    c.fail("relative_max_distance", "must exceed num_buckets / 2");
  s.encoder_layers = c.int_or("num_encoder_layers", 6);
  s.decoder_layers = c.int_or("num_decoder_layers", 6);
  if (s.decoder_layers < 1) c.fail("num_decoder_layers", "must be at least 1");
  const auto heads = [&](const char* field) {
    const int64_t h = c.int_or(field, 16);
    if (h <= 0 || s.hidden_size % h != 0) c.fail(field, "must divide hidden_size");
    return h;
  };
  s.encoder_heads = heads("num_encoder_attention_heads");
  s.decoder_heads = heads("num_decoder_attention_heads");
  s.encoder_ffn_dim = c.int_or("encoder_ffn_dim", 4096);
  s.decoder_ffn_dim = c.int_or("decoder_ffn_dim", 4096);
  s.act = c.string_or("activation_function", "gelu");
  if (!is_known_activation(s.act)) c.fail("activation_function", "unsupported activation '" + s.act + "'");
  if (!c.bool_or("add_cross_attention", true))
    c.fail("add_cross_attention", "false (a decoder without cross-attention) is not an encoder-decoder");
  s.tied = c.bool_or("tie_word_embeddings", true);
  return s;
}

// compute_relative_buckets(num_buckets, max_distance, relative, is_bidirectional=False) in its order
// of operations (T5's bucket truncates before adding max_exact; here the float32 sum is truncated):
// d = max(-relative, 0); d itself below max_exact = num_buckets / 2, else
// int(min(max_exact + log(d / max_exact) / log(max_distance / max_exact) * (num_buckets - max_exact),
// num_buckets - 1)). relative: int64 -> int64 buckets.
Value* relative_buckets(Ops& op, Value* relative, int64_t num_buckets, int64_t max_distance) {
  const int64_t max_exact = num_buckets / 2;
  Value* d = op.Max(op.Neg(relative), 0);
  Value* is_small = op.Less(d, static_cast<double>(max_exact));
  Value* d_f = op.Cast(op.Max(d, 1), {.to = DataType::FLOAT});  // d 0 is small: keep the log finite
  Value* large = op.Add(op.Mul(op.Div(op.Log(op.Div(d_f, static_cast<float>(max_exact))),
                                      static_cast<float>(std::log(static_cast<double>(max_distance) / max_exact))),
                               static_cast<float>(num_buckets - max_exact)),
                        static_cast<float>(max_exact));
  large = op.Cast(op.Min(large, static_cast<float>(num_buckets - 1)), {.to = DataType::INT64});
  return op.Where(is_small, d, large);
}

// ProphetNetNgramSelfAttention for the main stream and the first predict stream.
class NgramSelfAttention : public Module {
 public:
  explicit NgramSelfAttention(const ProphetNetSpec& s)
      : num_buckets_(s.num_buckets), heads_(s.decoder_heads), head_dim_(s.hidden_size / heads_) {
    const auto linear = [&](const char* name, int64_t out) {
      return child<Linear>(name, LinearOptions{s.hidden_size, out, true, s.dtype});
    };
    query_proj = linear("query_proj", s.hidden_size);
    key_proj = linear("key_proj", s.hidden_size);
    value_proj = linear("value_proj", s.hidden_size);
    out_proj = linear("out_proj", s.hidden_size);
    relative_pos_embeddings = linear("relative_pos_embeddings", s.num_buckets * heads_);
  }
  // main, predict: [batch, seq, hidden] (normed stream inputs); past: the main stream's cache;
  // main_mask / predict_mask: additive [1, 1, seq, past + seq] / [1, 1, seq, past + 2 seq];
  // main_buckets / predict_buckets: int64 [seq, past + seq] / [seq, past + 2 seq].
  // Returns {main output, predict output, present key, present value}.
  struct Out {
    Value *main, *predict, *key, *value;
  };
  Out forward(Ops& op, Value* main, Value* predict, const KVPair& past, Value* main_mask, Value* predict_mask,
              Value* main_buckets, Value* predict_buckets) const {
    auto sc = enter(op);
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
    const auto heads = [&](const Linear* proj, Value* x) {
      return op.Transpose(op.Reshape(proj->forward(op, x), {0, 0, heads_, head_dim_}), {.perm = {0, 2, 1, 3}});
    };
    const auto merge = [&](Value* y) { return out_proj->forward(op, op.Reshape(op.Transpose(y, {.perm = {0, 2, 1, 3}}), {0, 0, -1})); };
    AttentionOutputs m = op.Attention(heads(query_proj, main), heads(key_proj, main), heads(value_proj, main),
                                      op.Add(main_mask, bias(op, main, main_buckets)), past.key, past.value,
                                      {.scale = scale});
    // the predict stream's keys: the main stream's (cache included), then its own
    AttentionOutputs p = op.Attention(heads(query_proj, predict), heads(key_proj, predict), heads(value_proj, predict),
                                      op.Add(predict_mask, bias(op, predict, predict_buckets)), m.present_key,
                                      m.present_value, {.scale = scale});
    return {merge(m.y), merge(p.y), m.present_key, m.present_value};
  }

  Linear *query_proj, *key_proj, *value_proj, *out_proj, *relative_pos_embeddings;

 private:
  // get_*_relative_pos_embeddings: relative_pos_embeddings(x) viewed [batch, seq, buckets, heads],
  // gathered at `buckets` [seq, keys] -> [batch, heads, seq, keys].
  Value* bias(Ops& op, Value* x, Value* buckets) const {
    Value* table = op.Transpose(op.Reshape(relative_pos_embeddings->forward(op, x), {0, 0, num_buckets_, heads_}),
                                {.perm = {0, 3, 1, 2}});  // [batch, heads, seq, buckets]
    Value* shape = op.Concat({op.Shape(table, {.start = 0, .end = 3}), op.Shape(buckets, {.start = 1, .end = 2})},
                             {.axis = 0});
    Value* index = op.Expand(op.Unsqueeze(buckets, {0, 1}), shape);
    return op.builder().add_node("GatherElements", {table, index}, {{"axis", int64_t{3}}}, {table->dtype})[0];
  }
  // values, not a reference to the spec: the spec given to the constructor is a temporary
  int64_t num_buckets_, heads_, head_dim_;
};

class ProphetNetEncoderLayer : public Module {
 public:
  explicit ProphetNetEncoderLayer(const ProphetNetSpec& s) {
    self_attn = child<Attention>("self_attn", s.attention(s.encoder_heads));
    self_attn_layer_norm = adopt("self_attn_layer_norm", make_norm(s.norm()));
    feed_forward = adopt("", make_mlp(s.feed_forward(s.encoder_ffn_dim)));
    feed_forward_layer_norm = adopt("feed_forward_layer_norm", make_norm(s.norm()));
  }
  Value* forward(Ops& op, Value* x, Value* mask) const {
    auto sc = enter(op);
    x = self_attn_layer_norm->forward(op, op.Add(x, self_attn->forward(op, x, {.mask = mask}, nullptr, nullptr).hidden));
    return feed_forward_layer_norm->forward(op, op.Add(x, feed_forward->forward(op, x)));
  }
  Attention* self_attn;
  Norm *self_attn_layer_norm, *feed_forward_layer_norm;
  FeedForward* feed_forward;
};

// The masks and relative buckets of one decoder call, shared by the layers.
struct StreamContext {
  Value *main_mask, *predict_mask, *main_buckets, *predict_buckets, *cross_mask;
};

class ProphetNetDecoderLayer : public Module {
 public:
  explicit ProphetNetDecoderLayer(const ProphetNetSpec& s) {
    self_attn = child<NgramSelfAttention>("self_attn", s);
    self_attn_layer_norm = adopt("self_attn_layer_norm", make_norm(s.norm()));
    cross_attn = child<CrossAttention>("cross_attn", s.attention(s.decoder_heads));
    cross_attn_layer_norm = adopt("cross_attn_layer_norm", make_norm(s.norm()));
    feed_forward = adopt("", make_mlp(s.feed_forward(s.decoder_ffn_dim)));
    feed_forward_layer_norm = adopt("feed_forward_layer_norm", make_norm(s.norm()));
  }
  // main, predict: [batch, seq, hidden]. Returns {main, predict, presents {self, cross}}.
  struct Out {
    Value *main, *predict;
    std::vector<KVPair> present;
  };
  Out forward(Ops& op, Value* main, Value* predict, Value* encoder_hidden_states, const StreamContext& ctx,
              const std::vector<KVPair>& past) const {
    auto sc = enter(op);
    NgramSelfAttention::Out a = self_attn->forward(op, main, predict, past[0], ctx.main_mask, ctx.predict_mask,
                                                   ctx.main_buckets, ctx.predict_buckets);
    // the position-wise rest on both streams at once: [main | predict] along the sequence axis
    Value* x = op.Concat({op.Add(main, a.main), op.Add(predict, a.predict)}, {.axis = 1});
    x = self_attn_layer_norm->forward(op, x);
    AttentionResult c = cross_attn->forward(op, x, encoder_hidden_states, ctx.cross_mask, past[1].key, past[1].value);
    x = cross_attn_layer_norm->forward(op, op.Add(x, c.hidden));
    x = feed_forward_layer_norm->forward(op, op.Add(x, feed_forward->forward(op, x)));
    GraphBuilder& b = op.builder();
    Value* seq = op.Shape(main, {.start = 1, .end = 2});
    return {op.Slice(x, b.ints({0}), seq, b.ints({1})),
            op.Slice(x, seq, b.ints({std::numeric_limits<int64_t>::max()}), b.ints({1})),
            {{a.key, a.value}, {c.present_key, c.present_value}}};
  }
  NgramSelfAttention* self_attn;
  CrossAttention* cross_attn;
  Norm *self_attn_layer_norm, *cross_attn_layer_norm, *feed_forward_layer_norm;
  FeedForward* feed_forward;
};

class ProphetNetForConditionalGeneration : public Seq2SeqLM {
 public:
  explicit ProphetNetForConditionalGeneration(const ProphetNetSpec& s) : s_(s) {
    encoder_embed = child<Embedding>("prophetnet.encoder.word_embeddings", s.vocab_size, s.hidden_size, s.dtype);
    decoder_embed = child<Embedding>("prophetnet.decoder.word_embeddings", s.vocab_size, s.hidden_size, s.dtype);
    if (s.tied)
      encoder_embed->weight->source_key = decoder_embed->weight->source_key = "prophetnet.word_embeddings.weight";
    encoder_positions = child<Embedding>("prophetnet.encoder.position_embeddings", s.max_position_embeddings,
                                         s.hidden_size, s.dtype);
    encoder_norm = adopt("prophetnet.encoder.embeddings_layer_norm", make_norm(s.norm()));
    for (int64_t i = 0; i < s.encoder_layers; ++i)
      encoder_layers.push_back(child<ProphetNetEncoderLayer>("prophetnet.encoder.layers." + std::to_string(i), s));
    decoder_positions = child<Embedding>("prophetnet.decoder.position_embeddings", s.max_position_embeddings,
                                         s.hidden_size, s.dtype);
    ngram_embeddings = child<Embedding>("prophetnet.decoder.ngram_embeddings", s.ngram, s.hidden_size, s.dtype);
    decoder_norm = adopt("prophetnet.decoder.embeddings_layer_norm", make_norm(s.norm()));
    for (int64_t i = 0; i < s.decoder_layers; ++i)
      decoder_layers.push_back(child<ProphetNetDecoderLayer>("prophetnet.decoder.layers." + std::to_string(i), s));
    lm_head = child<LMHead>("lm_head", LMHeadOptions{s.hidden_size, s.vocab_size, false, s.dtype},
                            s.tied ? decoder_embed : nullptr);
  }

  DataType dtype() const override { return s_.dtype; }
  int64_t hidden_size() const override { return s_.hidden_size; }
  int64_t vocab_size() const override { return s_.vocab_size; }
  std::vector<LayerStates> decoder_states() const override {
    return self_and_cross_states(s_.decoder_layers, s_.decoder_heads, s_.hidden_size / s_.decoder_heads);
  }

  Value* encode(Ops& op, Value* input_ids, Value* attention_mask) const override {
    Value* h = op.Add(encoder_embed->forward(op, input_ids),
                      encoder_positions->forward(op, positions(op, input_ids, op.builder().ints({0}))));
    h = encoder_norm->forward(op, h);
    Value* mask = padding_mask(op, attention_mask, s_.dtype);
    for (const ProphetNetEncoderLayer* l : encoder_layers) h = l->forward(op, h, mask);
    return h;
  }

  Seq2SeqDecoderOutputs decode(Ops& op, const Seq2SeqDecoderInputs& in) const override {
    GraphBuilder& b = op.builder();
    Seq2SeqDecoderOutputs out;
    Value* past = op.Shape(in.past[0][0].key, {.start = 2, .end = 3});
    Value* pos = positions(op, in.input_ids, past);  // [1, seq]
    Value* main = decoder_norm->forward(op, op.Add(decoder_embed->forward(op, in.input_ids),
                                                   decoder_positions->forward(op, pos)));
    Value* stream = op.Gather(ngram_embeddings->weight->value(op), b.ints({s_.ngram - 1}));  // [1, hidden]
    Value* predict = op.Add(decoder_positions->forward(op, op.Add(pos, 1)), stream);          // [1, seq, hidden]
    predict = decoder_norm->forward(op, op.Expand(predict, op.Shape(main)));
    StreamContext ctx = context(op, in.input_ids, in.encoder_attention_mask, past);
    for (size_t i = 0; i < decoder_layers.size(); ++i) {
      ProphetNetDecoderLayer::Out y = decoder_layers[i]->forward(op, main, predict, in.encoder_hidden_states, ctx, in.past[i]);
      main = y.main;
      predict = y.predict;
      out.present.push_back(std::move(y.present));
    }
    out.logits = lm_head->forward(op, predict);
    return out;
  }

  Embedding *encoder_embed, *decoder_embed, *encoder_positions, *decoder_positions, *ngram_embeddings;
  Norm *encoder_norm, *decoder_norm;
  std::vector<ProphetNetEncoderLayer*> encoder_layers;
  std::vector<ProphetNetDecoderLayer*> decoder_layers;
  LMHead* lm_head;

 private:
  // ProphetNetPositionalEmbeddings: pad_token_id + past + 1 + i for the token i of a call, clamped
  // to the table. input_ids [batch, seq], past int64 [1] -> int64 [1, seq].
  Value* positions(Ops& op, Value* input_ids, Value* past) const {
    Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
    Value* start = op.Add(op.Squeeze(past, {0}), static_cast<double>(s_.pad_token_id + 1));
    Value* pos = op.Range(start, op.Add(start, seq), op.builder().scalar_i64(1));
    return op.Unsqueeze(op.Min(pos, static_cast<double>(s_.max_position_embeddings - 1)), {0});
  }

  // The masks and buckets of a call of `seq` tokens after `past` (query i at q = past + i).
  StreamContext context(Ops& op, Value* input_ids, Value* encoder_attention_mask, Value* past) const {
    auto sc = op.builder().scope("prophetnet_streams");
    GraphBuilder& b = op.builder();
    Value* zero = b.scalar_i64(0);
    Value* one = b.scalar_i64(1);
    Value* p = op.Squeeze(past, {0});
    Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
    Value* q = op.Unsqueeze(op.Range(p, op.Add(p, seq), one), {1});             // [seq, 1]
    Value* keys = op.Unsqueeze(op.Range(zero, op.Add(p, seq), one), {0});       // [1, past + seq]
    Value* own = op.Unsqueeze(op.Range(zero, seq, one), {0});                   // [1, seq]
    Value* row = op.Unsqueeze(op.Range(zero, seq, one), {1});                   // [seq, 1]
    const auto buckets = [&](Value* relative) {
      return relative_buckets(op, relative, s_.num_buckets, s_.relative_max_distance);
    };
    StreamContext c;
    Value* main_allowed = op.LessOrEqual(keys, q);  // causal
    c.main_mask = additive_mask(op, op.Unsqueeze(main_allowed, {0, 1}), s_.dtype);
    c.main_buckets = buckets(op.Sub(keys, q));
    // the predict stream: main keys up to its position, its own key at its position
    Value* predict_allowed = op.Concat({main_allowed, op.Equal(own, row)}, {.axis = 1});
    c.predict_mask = additive_mask(op, op.Unsqueeze(predict_allowed, {0, 1}), s_.dtype);
    c.predict_buckets = op.Concat({buckets(op.Sub(op.Sub(keys, q), 1)), buckets(op.Sub(own, row))}, {.axis = 1});
    // cross-attention queries: both streams
    c.cross_mask = cross_attention_mask(op, encoder_attention_mask, op.Concat({input_ids, input_ids}, {.axis = 1}), s_.dtype);
    return c;
  }

  ProphetNetSpec s_;
};

}  // namespace

std::unique_ptr<Architecture> create_prophetnet(const HfConfig& c, DataType dtype) {
  return std::make_unique<ProphetNetForConditionalGeneration>(prophetnet_spec(c, dtype));
}

}  // namespace mobius
