// MobileBERT (transformers/models/mobilebert/modeling_mobilebert.py, configuration_mobilebert.py;
// MobileBertModel). true = intra_bottleneck_size with use_bottleneck, else hidden_size; norm =
// NoNorm (x * weight + bias) with normalization_type "no_norm", else LayerNorm (NORM2FN).
//   embeddings  e = word_embeddings(input_ids) of width embedding_size; trigram_input:
//               e = [e shifted left (0 at the end) | e | e shifted right (0 first)] on the last axis;
//               embedding_transformation(e) to hidden_size (trigram_input or embedding_size !=
//               hidden_size); LayerNorm(e + position_embeddings(0..seq-1) + token_type_embeddings)
//   each layer  (MobileBertLayer, encoder.layer.{i}), x [batch, seq, hidden_size]:
//               use_bottleneck: li = bottleneck.input(x) (dense to true, LayerNorm); q = k = v = li
//               with use_bottleneck_attention, else q = k = bottleneck.attention(x) (a second
//               bottleneck) with key_query_shared_bottleneck (q = k = x without), v = x
//               (no bottleneck: q = k = v = li = x)
//               a = attention.output.LayerNorm(attention.output.dense(attn(q, k, v)) + li), heads of
//                   true / num_attention_heads (attention.self.{query, key, value})
//               num_feedforward_networks - 1 times: a = ffn.{j}.output.LayerNorm(ffn.{j}.output.dense(
//                   act(ffn.{j}.intermediate.dense(a))) + a)
//               out = output.LayerNorm(output.dense(act(intermediate.dense(a))) + a)
//               use_bottleneck: out = output.bottleneck.LayerNorm(output.bottleneck.dense(out) + x)
//   The embeddings' and output.LayerNorm are built without eps (torch's 1e-5 as LayerNorm), the
//   others with layer_norm_eps.
// Heads (base_model_prefix "mobilebert"): fill-mask cls.predictions.transform.{dense (hidden_size
// wide), hidden_act, LayerNorm (always a LayerNorm)} then the product by [decoder.weight^T ;
// cls.predictions.dense.weight] (MobileBertLMPredictionHead: the tied embeddings give the first
// embedding_size rows) + bias; classification and multiple choice over the pooler
// (mobilebert.pooler.dense + tanh with classifier_activation, else the first token) + classifier;
// token classification classifier, question answering qa_outputs.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "archs/archs.h"
#include "blocks/activation.h"
#include "blocks/attention.h"
#include "blocks/linear.h"
#include "blocks/norms.h"
#include "tasks/feature_extraction.h"
#include "tasks/text_heads.h"

namespace mobius {
namespace {

struct MobileBertOptions {
  int64_t vocab_size, hidden_size, embedding_size, max_position_embeddings, type_vocab_size;
  int64_t true_hidden_size, intermediate_size, num_attention_heads, num_hidden_layers, num_feedforward_networks;
  bool trigram_input, use_bottleneck, use_bottleneck_attention, key_query_shared_bottleneck, no_norm;
  float layer_norm_eps;
  std::string hidden_act;
  DataType dtype;
};

// NORM2FN[normalization_type](dim, eps): NoNorm (weight, bias; x * weight + bias) or LayerNorm.
// x [..., dim] -> same shape.
class MobileBertNorm : public Module {
 public:
  MobileBertNorm(int64_t dim, float eps, bool no_norm, DataType dtype) {
    if (no_norm) {
      weight = param("weight", {dim}, dtype);
      bias = param("bias", {dim}, dtype);
    } else {
      layer_norm = child<LayerNorm>("", NormOptions{.dim = dim, .eps = eps, .dtype = dtype});
    }
  }
  Value* forward(Ops& op, Value* x) const {
    if (layer_norm) return layer_norm->forward(op, x);
    auto s = enter(op);
    return op.Add(op.Mul(x, weight->value(op)), bias->value(op));
  }
  Parameter *weight = nullptr, *bias = nullptr;
  LayerNorm* layer_norm = nullptr;
};

constexpr float kTorchLayerNormEps = 1e-5f;  // nn.LayerNorm's default, where NORM2FN gets no eps

// norm(dense(x) [+ residual]) (BottleneckLayer, MobileBertSelfOutput, FFNOutput, MobileBertOutput,
// OutputBottleneck): x [..., in] -> [..., out].
class MobileBertDenseNorm : public Module {
 public:
  MobileBertDenseNorm(int64_t in, int64_t out, float eps, const MobileBertOptions& o) {
    dense = child<Linear>("dense", LinearOptions{in, out, true, o.dtype});
    norm = child<MobileBertNorm>("LayerNorm", out, eps, o.no_norm, o.dtype);
  }
  Value* forward(Ops& op, Value* x, Value* residual = nullptr) const {
    auto s = enter(op);
    Value* y = dense->forward(op, x);
    return norm->forward(op, residual ? op.Add(y, residual) : y);
  }
  Linear* dense;
  MobileBertNorm* norm;
};

// MobileBertEmbeddings: input_ids, token_type_ids int64 [batch, seq] -> [batch, seq, hidden_size].
class MobileBertEmbeddings : public Module {
 public:
  explicit MobileBertEmbeddings(const MobileBertOptions& o) : o_(o) {
    word_embeddings = child<Embedding>("word_embeddings", o.vocab_size, o.embedding_size, o.dtype);
    position_embeddings = child<Embedding>("position_embeddings", o.max_position_embeddings, o.hidden_size, o.dtype);
    token_type_embeddings = child<Embedding>("token_type_embeddings", o.type_vocab_size, o.hidden_size, o.dtype);
    if (o.trigram_input || o.embedding_size != o.hidden_size)
      embedding_transformation = child<Linear>(
          "embedding_transformation",
          LinearOptions{o.embedding_size * (o.trigram_input ? 3 : 1), o.hidden_size, true, o.dtype});
    norm = child<MobileBertNorm>("LayerNorm", o.hidden_size, kTorchLayerNormEps, o.no_norm, o.dtype);
  }
  Value* forward(Ops& op, Value* input_ids, Value* token_type_ids) const {
    auto s = enter(op);
    GraphBuilder& b = op.builder();
    Value* e = word_embeddings->forward(op, input_ids);
    if (o_.trigram_input) {  // pads [begin..., end...] of [batch, seq - 1, embedding_size]
      auto pad = [&](Value* x, std::vector<int64_t> pads) {
        return b.add_node("Pad", {x, b.ints(pads)}, {}, {o_.dtype})[0];
      };
      Value* next = pad(op.Slice(e, {1}, {INT64_MAX}, {1}), {0, 0, 0, 0, 1, 0});
      Value* prev = pad(op.Slice(e, {0}, {-1}, {1}), {0, 1, 0, 0, 0, 0});
      e = op.Concat({next, e, prev}, {.axis = 2});
    }
    if (embedding_transformation) e = embedding_transformation->forward(op, e);
    Value* seq = op.Squeeze(op.Shape(input_ids, {.start = 1, .end = 2}), {0});
    Value* positions = op.Range(b.scalar_i64(0), seq, b.scalar_i64(1));
    e = op.Add(op.Add(e, position_embeddings->forward(op, positions)), token_type_embeddings->forward(op, token_type_ids));
    return norm->forward(op, e);
  }
  Embedding *word_embeddings, *position_embeddings, *token_type_embeddings;
  Linear* embedding_transformation = nullptr;
  MobileBertNorm* norm;

 private:
  MobileBertOptions o_;
};

// FFNLayer (and MobileBertLayer's own intermediate + output, without the bottleneck):
// a [batch, seq, true] -> out.LayerNorm(out.dense(act(intermediate.dense(a))) + a).
class MobileBertFFN : public Module {
 public:
  MobileBertFFN(const MobileBertOptions& o, float output_eps) : act_(o.hidden_act) {
    intermediate = child<Linear>("intermediate.dense",
                                 LinearOptions{o.true_hidden_size, o.intermediate_size, true, o.dtype});
    output = child<MobileBertDenseNorm>("output", o.intermediate_size, o.true_hidden_size, output_eps, o);
  }
  Value* forward(Ops& op, Value* a) const {
    return output->forward(op, activation(op, act_, intermediate->forward(op, a)), a);
  }
  Linear* intermediate;
  MobileBertDenseNorm* output;

 private:
  std::string act_;
};

// MobileBertLayer: x [batch, seq, hidden_size], mask [batch, 1, seq, seq] -> [batch, seq, hidden_size].
class MobileBertLayer : public Module {
 public:
  explicit MobileBertLayer(const MobileBertOptions& o) : o_(o) {
    const int64_t t = o.true_hidden_size;
    if (o.use_bottleneck) {
      bottleneck_input = child<MobileBertDenseNorm>("bottleneck.input", o.hidden_size, t, o.layer_norm_eps, o);
      if (o.key_query_shared_bottleneck && !o.use_bottleneck_attention)
        bottleneck_attention = child<MobileBertDenseNorm>("bottleneck.attention", o.hidden_size, t, o.layer_norm_eps, o);
    }
    query = child<Linear>("attention.self.query", LinearOptions{t, t, true, o.dtype});
    key = child<Linear>("attention.self.key", LinearOptions{t, t, true, o.dtype});
    value = child<Linear>("attention.self.value",
                          LinearOptions{o.use_bottleneck_attention ? t : o.hidden_size, t, true, o.dtype});
    attention_output = child<MobileBertDenseNorm>("attention.output", t, t, o.layer_norm_eps, o);
    for (int64_t j = 0; j + 1 < o.num_feedforward_networks; ++j)
      ffn.push_back(child<MobileBertFFN>("ffn." + std::to_string(j), o, o.layer_norm_eps));
    // intermediate.dense and output.{dense, LayerNorm}: MobileBertOutput's LayerNorm without eps
    own_ffn = child<MobileBertFFN>("", o, kTorchLayerNormEps);
    if (o.use_bottleneck) output_bottleneck = child<MobileBertDenseNorm>("output.bottleneck", t, o.hidden_size, o.layer_norm_eps, o);
  }
  Value* forward(Ops& op, Value* x, Value* mask) const {
    auto s = enter(op);
    Value *q = x, *v = x, *li = x;
    if (bottleneck_input) {
      li = bottleneck_input->forward(op, x);
      if (o_.use_bottleneck_attention) q = v = li;
      else if (bottleneck_attention) q = bottleneck_attention->forward(op, x);
    }
    Value* a = attention_output->forward(op, attend(op, query->forward(op, q), key->forward(op, q), value->forward(op, v), mask), li);
    for (const MobileBertFFN* f : ffn) a = f->forward(op, a);
    Value* out = own_ffn->forward(op, a);
    return output_bottleneck ? output_bottleneck->forward(op, out, x) : out;
  }

  MobileBertDenseNorm *bottleneck_input = nullptr, *bottleneck_attention = nullptr;
  Linear *query, *key, *value;
  MobileBertDenseNorm* attention_output;
  std::vector<MobileBertFFN*> ffn;
  MobileBertFFN* own_ffn;
  MobileBertDenseNorm* output_bottleneck = nullptr;

 private:
  // softmax(q k^T / sqrt(head_dim) + mask) v over [batch, seq, heads * head_dim] projections.
  Value* attend(Ops& op, Value* q, Value* k, Value* v, Value* mask) const {
    const int64_t heads = o_.num_attention_heads, head_dim = o_.true_hidden_size / heads;
    auto split = [&](Value* t) { return op.Transpose(op.Reshape(t, {0, 0, heads, head_dim}), {.perm = {0, 2, 1, 3}}); };
    AttentionOutputs r = op.Attention(split(q), split(k), split(v), mask, nullptr, nullptr,
                                      {.scale = 1.0f / std::sqrt(static_cast<float>(head_dim))});
    op.builder().producer(r.y).tags = {.num_heads = heads, .kv_num_heads = heads, .head_size = head_dim};
    return op.Reshape(op.Transpose(r.y, {.perm = {0, 2, 1, 3}}), {0, 0, heads * head_dim});
  }
  MobileBertOptions o_;
};

class MobileBertModel : public Encoder {
 public:
  MobileBertModel(const MobileBertOptions& o, TextHeadLayout heads) : o_(o), heads_(std::move(heads)) {
    embeddings = child<MobileBertEmbeddings>("embeddings", o);
    for (int64_t i = 0; i < o.num_hidden_layers; ++i)
      layers.push_back(child<MobileBertLayer>("encoder.layer." + std::to_string(i), o));
  }
  DataType dtype() const override { return o_.dtype; }
  int64_t hidden_size() const override { return o_.hidden_size; }
  bool has_token_type_ids() const override { return true; }
  const TextHeadLayout* head_layout() const override { return &heads_; }
  const Embedding* word_embeddings() const override { return embeddings->word_embeddings; }
  Value* forward(Ops& op, const EncoderInputs& in) const override {
    Value* mask = padding_mask(op, in.attention_mask, o_.dtype);
    Value* h = embeddings->forward(op, in.input_ids, in.token_type_ids);
    for (const MobileBertLayer* layer : layers) h = layer->forward(op, h, mask);
    return h;
  }

  MobileBertEmbeddings* embeddings;
  std::vector<MobileBertLayer*> layers;

 private:
  MobileBertOptions o_;
  TextHeadLayout heads_;
};

}  // namespace

std::unique_ptr<Architecture> create_mobilebert(const HfConfig& c, DataType dtype) {
  MobileBertOptions o{};
  o.dtype = dtype;
  o.vocab_size = c.get_int("vocab_size");
  o.hidden_size = c.get_int("hidden_size");
  o.embedding_size = c.int_or("embedding_size", 128);
  o.max_position_embeddings = c.int_or("max_position_embeddings", 512);
  o.type_vocab_size = c.int_or("type_vocab_size", 2);
  o.use_bottleneck = c.bool_or("use_bottleneck", true);
  o.true_hidden_size = o.use_bottleneck ? c.int_or("intra_bottleneck_size", 128) : o.hidden_size;
  o.intermediate_size = c.int_or("intermediate_size", 512);
  o.num_attention_heads = c.int_or("num_attention_heads", 4);
  o.num_hidden_layers = c.get_int("num_hidden_layers");
  o.num_feedforward_networks = c.int_or("num_feedforward_networks", 4);
  o.trigram_input = c.bool_or("trigram_input", true);
  o.use_bottleneck_attention = c.bool_or("use_bottleneck_attention", false);
  o.key_query_shared_bottleneck = c.bool_or("key_query_shared_bottleneck", true);
  o.layer_norm_eps = static_cast<float>(c.float_or("layer_norm_eps", 1e-12));
  o.hidden_act = c.string_or("hidden_act", "relu");
  const std::string norm = c.string_or("normalization_type", "no_norm");
  if (norm != "no_norm" && norm != "layer_norm")
    c.fail("normalization_type", "must be 'no_norm' or 'layer_norm' (NORM2FN)");
  o.no_norm = norm == "no_norm";
  // the fields hf_config.h does not range-check by name (the others it does, sizes from 1)
  if (o.type_vocab_size < 1) c.fail("type_vocab_size", "must be at least 1 (MobileBertEmbeddings' table)");
  if (o.true_hidden_size < 1 || o.true_hidden_size > kMaxHiddenSize)
    c.fail("intra_bottleneck_size", "expected a value in [1, " + std::to_string(kMaxHiddenSize) + "]");
  if (o.num_feedforward_networks < 1 || o.num_feedforward_networks > kMaxLayers)
    c.fail("num_feedforward_networks", "expected a value in [1, " + std::to_string(kMaxLayers) + "]");
  if (o.num_attention_heads < 1 || o.true_hidden_size % o.num_attention_heads != 0)
    c.fail("num_attention_heads", o.use_bottleneck ? "must divide intra_bottleneck_size" : "must divide hidden_size");
  if (!is_known_activation(o.hidden_act)) c.fail("hidden_act", "unsupported activation '" + o.hidden_act + "'");
  if (o.embedding_size > o.hidden_size)
    c.fail("embedding_size", "must not exceed hidden_size (the fill-mask decoder's rows: MobileBertLMPredictionHead)");

  // MobileBertPooler: dense + tanh with classifier_activation, else the first token as it is
  const FirstTokenHead pooled = c.bool_or("classifier_activation", true)
                                    ? FirstTokenHead{"mobilebert.pooler.dense", "tanh", "classifier"}
                                    : FirstTokenHead{.out = "classifier"};
  TextHeadLayout heads{"mobilebert", "MobileBertModel",
                       {.dense = "cls.predictions.transform.dense", .act = o.hidden_act,
                        .norm = "cls.predictions.transform.LayerNorm", .decoder = "cls.predictions.decoder",
                        .bias = "cls.predictions.bias", .eps = o.layer_norm_eps, .width = o.hidden_size,
                        .extra_rows = "cls.predictions.dense"},
                       pooled, pooled};
  return std::make_unique<MobileBertModel>(o, std::move(heads));
}

}  // namespace mobius
